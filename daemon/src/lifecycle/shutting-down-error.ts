import { McpdError, WireCode } from "@mcpd/protocol";

/** The error of what the daemon refuses or gives up because it is shutting down (-32065, MCPD_SHUTTING_DOWN). */
export function shuttingDownError(): McpdError {
  return new McpdError("MCPD_SHUTTING_DOWN", "mcpd is shutting down", { wireCode: WireCode.ShuttingDown });
}
