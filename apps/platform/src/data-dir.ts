import { chmodSync, mkdirSync, statSync } from "node:fs";

/**
 * The all-in-one's data directory, readable by its owner only: it holds the database (people,
 * token hashes, encrypted credentials, the audit trail) and the key that decrypts them. Made with
 * mode 0700; one an earlier version left open to other users of the machine is closed at start.
 */
export function prepareDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if ((statSync(dataDir).mode & 0o077) !== 0) chmodSync(dataDir, 0o700);
}
