/** The dashboard's API: reads with the session cookie; actions also with the CSRF token the page carries. */

/** An answer of the API: the result, or why not. */
export type Answer = { ok: true; result: Record<string, unknown> } | { ok: false; error: string };

const csrf = (): string => document.querySelector<HTMLMetaElement>('meta[name="mcpd-csrf"]')?.content ?? "";

/** POSTs `body` to the API path `path`; a refused or failed request is an answer with its error. */
export async function post(path: string, body: Record<string, unknown>): Promise<Answer> {
  try {
    const res = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", "x-mcpd-csrf": csrf() },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    if (!res.ok) return { ok: false, error: `HTTP ${res.status}: ${(await res.text()).trim()}` };
    return (await res.json()) as Answer;
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/** GETs JSON from the API path `path`. */
export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { credentials: "same-origin" });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).trim()}`);
  return (await res.json()) as T;
}
