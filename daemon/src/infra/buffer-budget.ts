/**
 * A part of the daemon that holds bytes for its clients (the socket server, the HTTP front end), as the
 * daemon-wide {@link BufferBudget} sees it: it charges the budget as what it holds changes, and can give
 * up its largest holder when the budget runs out.
 */
export interface BudgetAccount {
  /** Bytes held by its largest single holder now (0 when it holds nothing). */
  largestHolder(): number;
  /**
   * Closes (or trims) its largest holder, releasing its bytes through {@link BufferBudget.charge} before it
   * returns. `total` and `max` are the budget's figures, for the holder's error and the log line.
   */
  shedLargest(total: number, max: number): void;
}

/**
 * The daemon-wide budget of bytes held for clients (`mcpd.maxBufferedBytesTotal`, 128 MiB by default):
 * socket connections' unfinished lines and unsent output, HTTP request bodies still arriving, HTTP
 * responses not yet read and the SSE events kept for resumption, all counted together, by deltas as they
 * change. Past the budget, the holder holding the most over every account is shed (a connection or a
 * stream closed, a body refused, kept events trimmed), then the next, until the total is within it
 * again: one client that does not read never costs the others theirs.
 *
 * Charging is a few arithmetic steps (it sits on every message's path); only a charge that passes the
 * budget scans the accounts.
 */
export class BufferBudget {
  private held = 0;
  private maxBytes: number;
  private readonly accounts: BudgetAccount[] = [];
  private enforcing = false;

  /** @param maxBytes the budget, in bytes */
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Bytes held for clients now, over every account. */
  get bytes(): number {
    return this.held;
  }

  /** The budget, in bytes. */
  get max(): number {
    return this.maxBytes;
  }

  /** A new budget (a reload): a lower one is enforced at once. */
  setMax(maxBytes: number): void {
    this.maxBytes = maxBytes;
    if (this.held > maxBytes) this.enforce();
  }

  /** Adds an account whose holders may be shed. */
  add(account: BudgetAccount): void {
    this.accounts.push(account);
  }

  /** Bytes held changed by `delta` (negative: released); a charge that passes the budget sheds holders. */
  charge(delta: number): void {
    this.held += delta;
    if (delta > 0 && this.held > this.maxBytes) this.enforce();
  }

  /** Sheds the largest holder over every account until the total is within the budget. */
  private enforce(): void {
    // Shedding releases bytes through charge(); a holder shed while another is being shed waits its turn.
    if (this.enforcing) return;
    this.enforcing = true;
    try {
      while (this.held > this.maxBytes) {
        let worst: BudgetAccount | undefined;
        let most = 0;
        for (const a of this.accounts) {
          const n = a.largestHolder();
          if (n > most) {
            most = n;
            worst = a;
          }
        }
        if (!worst) return;
        const before = this.held;
        worst.shedLargest(before, this.maxBytes);
        // An account that released nothing would be asked again for ever.
        if (this.held >= before) return;
      }
    } finally {
      this.enforcing = false;
    }
  }
}
