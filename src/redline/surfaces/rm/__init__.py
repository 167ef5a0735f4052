"""The rm surface (/api/v1/rm): snake_case, `{"detail": …}` errors, a broken rule is a 422."""
