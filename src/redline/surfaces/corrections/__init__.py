"""The corrections surface (/v1): camelCase, `{"error": {...}}` bodies, cursor pages, 201 on create."""
