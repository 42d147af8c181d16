// One keyring call in a process of its own: a Secret Service that never answers can block the
// binding inside native code, and only a separate process can then be ended (SIGKILL) without
// waiting for it. Reads `{op, service, key, secret?}` on stdin, writes `{value}` or `{error}`.
import { readFileSync } from "node:fs";
import { Entry } from "@napi-rs/keyring";

const request = JSON.parse(readFileSync(0, "utf8")) as {
  op: "get" | "set" | "delete";
  service: string;
  key: string;
  secret?: string;
};
try {
  // On Linux the Secret Service only: the kernel keyring forgets everything at reboot.
  const entry = new Entry(request.service, request.key, { linux: { store: "secret-service" } });
  let value: string | null | undefined;
  if (request.op === "get") value = entry.getPassword();
  else if (request.op === "set") entry.setPassword(request.secret ?? "");
  else entry.deletePassword();
  process.stdout.write(JSON.stringify({ value: value ?? undefined }));
} catch (error) {
  process.stdout.write(JSON.stringify({ error: (error as Error).message ?? String(error) }));
}
