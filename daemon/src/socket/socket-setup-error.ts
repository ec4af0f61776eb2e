import { McpdError } from "@mcpd/protocol";

/** Refusals before listening: another daemon, unsafe directory, bad path. */
export class SocketSetupError extends McpdError {
  override name = "SocketSetupError";
  constructor(code: "MCPD_ALREADY_RUNNING" | "MCPD_UNSAFE_SOCKET_DIR", message: string) {
    super(code, message);
  }
}
