// Watch the daemon: server states, list changes and resource updates, surviving daemon restarts.
// Usage: node examples/watch.mjs [RESOURCE_URI]   (Ctrl-C to stop)
import { connect } from "@mcpd/client";

const client = await connect({ clientInfo: { name: "watcher", version: "1.0.0" } });
for (const s of await client.servers()) console.log(`${s.name}: ${s.state} (${s.transport}, ${s.tools} tools)`);
client.on("serverState", (e) => console.log(`${e.server}: ${e.previous ?? "?"} -> ${e.state}${e.reason ? ` (${e.reason})` : ""}`));
client.on("listChanged", (e) => console.log(`${e.kind} of ${e.server ?? "mcpd"} changed`));
client.on("connectionLost", (e) => console.log(`lost mcpd: ${e.error.message}; reconnecting`));
client.on("reconnected", (e) => console.log(`reconnected after ${e.attempts} attempt(s)`));
const uri = process.argv[2];
if (uri) await client.subscribe(uri, (u) => console.log(`updated: ${u.uri} (${u.server})`));
process.once("SIGINT", () => void client.close());
console.log("watching (Ctrl-C to stop)");
