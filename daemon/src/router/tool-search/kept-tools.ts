import { RUNTIME_DEFAULTS } from "../../defaults.js";

/**
 * The tools a session in search mode lists beside `search_tools`: those its searches found and those it
 * used, most recent last, at most `RUNTIME_DEFAULTS.toolSearchKeptTools`. Past the bound, the oldest found
 * and never used goes first; only when every kept tool was used does the oldest used one go.
 */
export class KeptTools {
  /** Exposed name -> whether it was used; Map order is recency. */
  private readonly tools = new Map<string, boolean>();

  constructor(private readonly bound: number = RUNTIME_DEFAULTS.toolSearchKeptTools) {}

  /** Names kept, oldest first. */
  names(): IterableIterator<string> {
    return this.tools.keys();
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  /** Keeps tools a search found; returns whether the kept set changed (a list_changed is due). */
  found(names: readonly string[]): boolean {
    let changed = false;
    for (const name of names) {
      const used = this.tools.get(name);
      if (used === undefined) changed = true;
      this.tools.delete(name);
      this.tools.set(name, used ?? false);
    }
    return this.trim() || changed;
  }

  /** Keeps a tool that was called; returns whether the kept set changed. */
  used(name: string): boolean {
    const had = this.tools.has(name);
    this.tools.delete(name);
    this.tools.set(name, true);
    return this.trim() || !had;
  }

  /** Drops what is past the bound; returns whether anything was dropped. */
  private trim(): boolean {
    let dropped = false;
    while (this.tools.size > this.bound) {
      let victim: string | undefined;
      for (const [name, used] of this.tools) {
        if (!used) {
          victim = name;
          break;
        }
      }
      this.tools.delete(victim ?? (this.tools.keys().next().value as string));
      dropped = true;
    }
    return dropped;
  }
}
