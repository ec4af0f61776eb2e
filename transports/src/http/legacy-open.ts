import { HttpError } from "@mcpd/protocol";
import { HttpAuth } from "./auth/http-auth.js";
import { LegacySseConnection, type LegacySseDeps } from "./legacy-sse.js";
import { parseBearerChallenge } from "./auth/www-authenticate.js";

/**
 * Opens the legacy HTTP+SSE stream (GET, then the `endpoint` event), with the OAuth access token when
 * `auth` is given: a 401 is answered once by a refresh or a new authorization and the GET sent again.
 * `headers` are the configured ones; `onCreated` learns the connection before it opens (so a close
 * during the open reaches it) and is told `undefined` when the open failed.
 * @throws the open's error (HttpError, the network error, `signal.reason`).
 */
export async function openLegacyConnection(
  deps: Omit<LegacySseDeps, "headers"> & { headers: Record<string, string> },
  auth: HttpAuth | undefined,
  onCreated: (legacy: LegacySseConnection | undefined) => void,
  signal: AbortSignal,
  retried = false,
): Promise<void> {
  const token = await auth?.client.accessToken(signal);
  const configured = deps.headers;
  const legacy = new LegacySseConnection({ ...deps, headers: () => HttpAuth.withToken(configured, token) });
  onCreated(legacy);
  try {
    await legacy.open(signal);
  } catch (err) {
    onCreated(undefined);
    if (auth && !retried && err instanceof HttpError && err.status === 401) {
      await auth.client.unauthorized(await parseBearerChallenge(err.wwwAuthenticate), token, signal);
      return openLegacyConnection(deps, auth, onCreated, signal, true);
    }
    throw err;
  }
}
