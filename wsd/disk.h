/*
 * disk.h: svc-wsd's files of a room (disk.c), a part of the room (room.h):
 * unsaved edits saved once they settle, disk changes merged into the
 * document, the files-changed call, the byte quotas on clients' updates,
 * and the rows of collab_files (docs/collaboration.md "Document life").
 */
#ifndef SVC_WSD_DISK_H
#define SVC_WSD_DISK_H

/* At start-up: adds the disk part to the rooms (room.h wsd_room_add_part). */
void wsd_disk_register(void);

/*
 * The internal endpoint POST /internal/projects/:id/disk-changed: the API
 * changed the project's files on disk; the room reads the files whose hash
 * changed (on the io worker) and applies them as server edits (once loaded,
 * when it is loading). Returns 0, or SVC_E_NOT_FOUND when the project has
 * no room here.
 */
int wsd_disk_changed(const char *project_id);

#endif
