-- 015_room_leases.sql: which svc-wsd instance serves a project's collaboration room (issue 19,
-- docs/collaboration.md "Several instances"). An instance takes the lease when it opens the room,
-- renews it while it serves it, and gives it back when it unloads it; another instance may take it
-- only once it expired, so two instances never serve one room. `url` is where the API reaches that
-- instance's internal endpoints (its SVC_WSD_INTERNAL_URL): a disk change goes to the instance
-- that serves the room. `wanted_at`: another instance was asked for the room (the load balancer
-- sends its clients there now): the holder hands it over at its next renewal. No foreign key: a lease outlives nothing (it expires) and is written often.
CREATE TABLE room_leases (
  project_id CHAR(36) NOT NULL PRIMARY KEY,
  instance VARCHAR(160) NOT NULL,
  url VARCHAR(255) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  wanted_at DATETIME(3) NULL,
  updated_at DATETIME(3) NOT NULL,
  KEY ix_room_leases_instance (instance)
) ENGINE=InnoDB;
