import { posix } from "node:path";
import type { ExecResult, FileEntry, ShellBackend } from "./shell-backend.ts";
import { WorkspaceEscapeError } from "./workspace.ts";

export interface SandboxTarget {
  /** AGENTPLANE_API_URL: the control plane as the sandbox reaches it. */
  apiUrl: string;
  /** AGENTPLANE_TOKEN: the sandbox's own platform token. */
  token: string;
  projectId: string;
  sandboxId: string;
  /** The workspace directory inside the sandbox. */
  root: string;
}

/** Exit code the file scripts use for a path that resolves outside the workspace. */
const ESCAPE_EXIT = 97;

// Runs inside the sandbox: $1 is the root, $2 the requested path; the real path (symlinks
// followed) must stay inside the root, as on the local backend.
const CONFINE = `root=$(realpath -m -- "$1") && p=$(realpath -m -- "$root/$2") || exit 1
case "$p" in "$root"|"$root"/*) ;; *) echo "$2 resolves outside the workspace" >&2; exit ${ESCAPE_EXIT};; esac`;

/**
 * The shell tools inside a sandbox: every operation is one `POST {AGENTPLANE_API_URL}/v1/shell/exec`
 * (contract `execShell` in packages/contracts/src/sandbox) with the sandbox's token as bearer.
 */
export class SandboxShellBackend implements ShellBackend {
  readonly kind = "sandbox";
  readonly root: string;
  readonly #target: SandboxTarget;

  constructor(target: SandboxTarget) {
    this.#target = target;
    this.root = target.root;
  }

  async exec(command: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ExecResult> {
    return this.#call(["/bin/sh", "-c", command], options.timeoutMs, undefined, options.signal);
  }

  #lexical(path: string): string {
    const resolved = posix.resolve(this.root, path);
    const rel = posix.relative(this.root, resolved);
    if (rel === ".." || rel.startsWith("../")) throw new WorkspaceEscapeError(`${path} is outside the workspace`);
    return rel === "" ? "." : rel;
  }

  async #script(script: string, path: string, stdin?: string): Promise<ExecResult> {
    const rel = this.#lexical(path);
    const result = await this.#call(["/bin/sh", "-c", `${CONFINE}\n${script}`, "sh", this.root, rel], 30_000, stdin);
    if (result.exitCode === ESCAPE_EXIT) throw new WorkspaceEscapeError(result.stderr.trim());
    if (result.exitCode !== 0) throw new Error(result.stderr.trim() || `exit code ${result.exitCode}`);
    return result;
  }

  async readFile(path: string, maxBytes: number) {
    const r = await this.#script(`wc -c < "$p"; head -c ${maxBytes} -- "$p"`, path);
    const newline = r.stdout.indexOf("\n");
    const size = Number(r.stdout.slice(0, newline).trim());
    return { content: r.stdout.slice(newline + 1), truncated: size > maxBytes, size };
  }

  async writeFile(path: string, content: string, append: boolean) {
    await this.#script(`mkdir -p -- "$(dirname -- "$p")" && cat ${append ? ">>" : ">"} "$p"`, path, content);
    return { bytes: Buffer.byteLength(content) };
  }

  async list(path: string): Promise<FileEntry[]> {
    const r = await this.#script(
      `cd -- "$p" && for f in * .[!.]*; do [ -e "$f" ] || [ -L "$f" ] || continue
if [ -L "$f" ]; then t=link; elif [ -d "$f" ]; then t=dir; elif [ -f "$f" ]; then t=file; else t=other; fi
printf '%s\\t%s\\t%s\\n' "$t" "$(wc -c < "$f" 2>/dev/null || echo 0)" "$f"; done`,
      path,
    );
    return r.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [type, size, ...name] = line.split("\t");
        return { name: name.join("\t"), type: type as FileEntry["type"], size: type === "file" ? Number(size) : 0 };
      })
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async #call(command: string[], timeoutMs: number, stdin?: string, signal?: AbortSignal): Promise<ExecResult> {
    // Inside a sandbox the platform is reached through its egress proxy: Node's fetch follows
    // HTTP(S)_PROXY there because the sandbox sets NODE_USE_ENV_PROXY=1.
    const base = new URL(this.#target.apiUrl);
    if (!base.pathname.endsWith("/")) base.pathname += "/";
    const res = await fetch(new URL("v1/shell/exec", base), {
      method: "POST",
      headers: { authorization: `Bearer ${this.#target.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        projectId: this.#target.projectId,
        sandboxId: this.#target.sandboxId,
        command,
        cwd: this.root,
        timeoutMs,
        ...(stdin === undefined ? {} : { stdin }),
      }),
      ...(signal ? { signal } : {}),
    });
    const text = await res.text();
    if (!res.ok) {
      let detail = text.slice(0, 300);
      try {
        const problem = JSON.parse(text) as { detail?: string; title?: string };
        detail = problem.detail ?? problem.title ?? detail;
      } catch {}
      throw new Error(`the sandbox refused the command (${res.status}): ${detail}`);
    }
    return JSON.parse(text) as ExecResult;
  }
}
