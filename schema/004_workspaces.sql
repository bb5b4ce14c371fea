-- 004_workspaces.sql: folder names unique within a workspace; the project listing of a folder.
ALTER TABLE folders ADD UNIQUE KEY uq_folders_name (workspace_id, name);
ALTER TABLE projects ADD KEY ix_projects_folder_list (workspace_id, folder_id, deleted_at, created_at, id);
