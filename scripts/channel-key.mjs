// Prints the channel key for the auth token read on stdin (not argv, which
// other local users can see): lowercase hex HMAC-SHA256(token,
// "gsv-channel-key"), as protocol/src/channel_key.rs derives it.
import { createHmac } from "node:crypto";

let token = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (token += d));
process.stdin.on("end", () => {
  process.stdout.write(createHmac("sha256", token).update("gsv-channel-key").digest("hex"));
});
