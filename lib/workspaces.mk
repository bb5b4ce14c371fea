# workspaces.mk: build fragment of workspaces, roles, folders and the permission module
