/** The key of one subscription: `<server>\0<uri>`. */
export function subscriptionKey(server: string, uri: string): string {
  return `${server}\0${uri}`;
}

/**
 * The URI forms one connection subscribed to each (server, URI) with: the server's own URI, or the
 * aggregate view's namespaced `mcpd://<server>/<uri>`. Updates go out once per form: a client matches them
 * by the URI it used.
 */
export class SubscribedForms {
  /** `<server>\0<uri>` -> forms. */
  private readonly forms = new Map<string, Set<string>>();

  add(key: string, form: string): void {
    const forms = this.forms.get(key) ?? new Set<string>();
    forms.add(form);
    this.forms.set(key, forms);
  }

  /** Drops one form; true when it was the last of that key (the connection's subscription then ends). */
  remove(key: string, form: string): boolean {
    const forms = this.forms.get(key);
    forms?.delete(form);
    if (forms && forms.size > 0) return false;
    this.forms.delete(key);
    return true;
  }

  of(key: string): ReadonlySet<string> | undefined {
    return this.forms.get(key);
  }
}
