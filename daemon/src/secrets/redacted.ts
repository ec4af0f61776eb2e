/** What replaces a secret wherever mcpd shows or says something that held one: logs, errors, status, configs. */
export const REDACTED = "***";
