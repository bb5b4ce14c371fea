/*
 * comments.h: svc-wsd's design comments of a room (comments.c), a part of
 * the room (room.h): a request (message 100, JSON) is checked against the
 * room's comments, stored through the API's signed internal endpoints, and
 * broadcast once the API answered; a joiner gets every open comment
 * (docs/collaboration.md "Design comments").
 */
#ifndef SVC_WSD_COMMENTS_H
#define SVC_WSD_COMMENTS_H

/* At start-up: adds the comments part to the rooms (room.h wsd_room_add_part). */
void wsd_comments_register(void);

#endif
