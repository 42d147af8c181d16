import { execFileSync } from "node:child_process";
import { accessSync, chmodSync, constants, copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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

/**
 * A root filesystem of a handful of host binaries and the libraries `ldd` names for them, plus a
 * marker file: small enough to build in a test, and nothing of the host's /usr is in it.
 */
export function buildTinyRootfs(root: string): string {
  const copy = (source: string, target = source) => {
    mkdirSync(dirname(join(root, target)), { recursive: true });
    copyFileSync(source, join(root, target));
    chmodSync(join(root, target), 0o755);
  };
  for (const [binary, target] of [
    ["/bin/sh", "/bin/sh"],
    ["/usr/bin/sleep", "/bin/sleep"],
    ["/usr/bin/cat", "/bin/cat"],
    ["/usr/bin/ls", "/bin/ls"],
  ] as const) {
    copy(binary, target);
    for (const line of execFileSync("ldd", [binary], { encoding: "utf8" }).split("\n")) {
      const lib = /(\/\S+)\s+\(0x/.exec(line)?.[1];
      if (lib) copy(lib);
    }
  }
  mkdirSync(join(root, "etc"), { recursive: true });
  writeFileSync(join(root, "etc", "os-release"), "ID=tiny\nNAME=Tiny test image\n");
  chmodSync(root, 0o755);
  return root;
}
