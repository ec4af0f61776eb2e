/** The shape of `mcpd/dashboardLogin`: a one-time link into the dashboard the HTTP front end serves. */

/** Result of `mcpd/dashboardLogin`. */
export interface DashboardLoginResult {
  /**
   * The login link (`http://127.0.0.1:7767/dashboard/login?ticket=...`): opened once, within a minute, it
   * sets the dashboard's session cookie and redirects to `/`. A second use, or a late one, is refused.
   */
  url: string;
  /** When the link stops working (ISO 8601). */
  expiresAt: string;
}
