import { redactUrl } from "./redact-url.js";
import { REDACTED } from "./redacted.js";
import { isSecretName } from "./secret-names.js";

/**
 * A command line with its secret-looking parts masked: `--token=x` (the value of a flag whose name names a
 * secret, {@link isSecretName}), the argument after such a flag (`--api-key x`), `NAME=value` pairs with
 * such a name (arguments to `env`, `docker -e`), and credentials in URL arguments ({@link redactUrl}).
 * Best effort: a secret passed as a bare positional argument cannot be recognized by its name.
 */
export function redactArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  let maskNext = false;
  for (const arg of args) {
    if (maskNext) {
      out.push(REDACTED);
      maskNext = false;
      continue;
    }
    const flag = /^(--?[A-Za-z0-9][A-Za-z0-9_.-]*)(=(.*))?$/s.exec(arg);
    if (flag && isSecretName(flag[1]!.replace(/^-+/, ""))) {
      if (flag[2] !== undefined) out.push(`${flag[1]}=${REDACTED}`);
      else {
        out.push(arg);
        maskNext = true;
      }
      continue;
    }
    const pair = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(arg);
    if (pair && isSecretName(pair[1]!)) {
      out.push(`${pair[1]}=${REDACTED}`);
      continue;
    }
    out.push(/^[a-z][a-z0-9+.-]*:\/\//i.test(arg) ? redactUrl(arg) : arg);
  }
  return out;
}
