/**
 * Secrets, in one place: which names name a secret (`secret-names.ts`: env keys, headers, flags, query
 * parameters and log fields alike), which values look generated (`generated-value.ts`), the secret values
 * a server config holds (`config-secrets.ts`), masking them wherever mcpd speaks (`secret-scrubber.ts`),
 * and showing a URL or a command line with its secrets masked (`redact-url.ts`, `redact-args.ts`).
 * A config shown whole is masked by `config/redact-config.ts`, with these.
 */
export { REDACTED } from "./redacted.js";
export { AUTH_SCHEMES, isSecretField, isSecretName, secretNameStrength, type SecretNameStrength } from "./secret-names.js";
export { looksGenerated } from "./generated-value.js";
export { redactUrl, redactUrlCredentials } from "./redact-url.js";
export { redactArgs } from "./redact-args.js";
export { secretValues } from "./config-secrets.js";
export { MIN_SCRUBBED_SECRET_CHARS, SecretScrubber, type SecretSource } from "./secret-scrubber.js";
