import { existsSync, lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";

export const DEFAULT_IMAGE = "default";

/** Host directories the `default` image exposes read-only (merged-/usr hosts have symlinks here). */
const HOST_SYSTEM_ENTRIES = ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/**
 * Host files under /etc that programs need to run (dynamic loader, alternatives, TLS roots, zone).
 * Of /etc/ssl only the public parts: a sandbox's user is the service's user on the host (root,
 * usually), to whom /etc/ssl/private and the host's TLS keys in it are readable.
 */
const HOST_ETC_ENTRIES = [
  "alternatives",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "nsswitch.conf",
  "ssl/certs",
  "ssl/openssl.cnf",
  "ca-certificates",
  "ca-certificates.conf",
  "mime.types",
  "profile",
  "bash.bashrc",
  "inputrc",
  "terminfo",
];

/** Entries of an image root the sandbox provides itself. */
const SANDBOX_OWNED = new Set(["proc", "dev", "sys", "tmp", "run", "workspace", "lost+found"]);

/** `source` as bwrap binds it: at `seen` when bwrap reaches it elsewhere than on the host. */
function bindEntry(source: string, target: string, seen = source): string[] {
  const stat = lstatSync(source);
  if (stat.isSymbolicLink()) return ["--symlink", readlinkSync(source), target];
  if (stat.isDirectory() || stat.isFile()) return ["--ro-bind", seen, target];
  return [];
}

/** The root filesystem of a registered image: the catalog's own entries only, never `constructor`. */
export function imageRoot(catalog: Record<string, string>, image: string): string | undefined {
  return Object.hasOwn(catalog, image) ? catalog[image] : undefined;
}

/**
 * bwrap arguments that lay out an image's root filesystem read-only. `default` is the host's
 * system directories and a few /etc files; a registered image is every top-level entry of its
 * directory (built with debootstrap, for example), so the sandbox can still own /tmp and /workspace.
 * `seenRoot`: where bwrap reaches that directory, when not at its own path (private-mounts.ts).
 */
export function imageMountArgs(
  image: string,
  catalog: Record<string, string>,
  seenRoot = imageRoot(catalog, image),
): string[] {
  if (image === DEFAULT_IMAGE) {
    const args: string[] = [];
    for (const name of HOST_SYSTEM_ENTRIES) {
      if (existsSync(`/${name}`)) args.push(...bindEntry(`/${name}`, `/${name}`));
    }
    args.push("--dir", "/etc");
    for (const name of HOST_ETC_ENTRIES) {
      if (existsSync(`/etc/${name}`)) args.push(...bindEntry(`/etc/${name}`, `/etc/${name}`));
    }
    return args;
  }
  const root = imageRoot(catalog, image);
  if (!root) throw new Error(`unknown image ${image}`);
  const args: string[] = [];
  for (const name of readdirSync(root)) {
    if (SANDBOX_OWNED.has(name)) continue;
    args.push(...bindEntry(join(root, name), `/${name}`, join(seenRoot ?? root, name)));
  }
  return args;
}
