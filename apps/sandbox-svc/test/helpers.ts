import { accessSync, chmodSync, constants, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@agentplane/service-kit";
import { LocalDriver } from "../src/driver/local/local-driver.ts";

function hasBwrap(): boolean {
  for (const dir of ["/usr/bin", "/usr/local/bin", "/bin"]) {
    try {
      accessSync(join(dir, "bwrap"), constants.X_OK);
      return true;
    } catch {
      // Next directory.
    }
  }
  return false;
}

/** Suites that need real namespaces: skipped with the reason outside CI, a failure in CI. */
export function requireBwrap(): { available: boolean; reason: string } {
  const available = hasBwrap();
  if (!available && process.env.CI === "true") {
    throw new Error("bwrap is required in CI: install the Debian package bubblewrap");
  }
  return { available, reason: available ? "" : " (skipped: bwrap not installed; apt-get install bubblewrap)" };
}

/**
 * A data dir for a driver. Searchable by others (as a service's data dir usually is), so that a
 * root driver runs its sandboxes as their own host user, not as root (host-user.ts).
 */
export function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-test-"));
  chmodSync(dir, 0o711);
  return dir;
}

export function newDriver(options: Partial<ConstructorParameters<typeof LocalDriver>[0]> = {}): LocalDriver {
  return new LocalDriver({ dataDir: tempDataDir(), logger: silentLogger(), ...options });
}
