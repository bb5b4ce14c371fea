// ui/: the small shared pieces of every screen, imported from here (docs/web.md "Layout"):
// dialogs (dialog.jsx), labelled fields and notes (field.jsx), hooks (hooks.js).
export { Dialog, ConfirmDialog, NameDialog } from './dialog.jsx';
export { Field, ErrorNote, Loading } from './field.jsx';
export { useId, useAsync, useTitle } from './hooks.js';
