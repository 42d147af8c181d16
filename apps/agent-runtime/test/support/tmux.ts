import { execFileSync } from "node:child_process";
import { requireBinary } from "@agentplane/testkit/browser";

export const tmuxAvailability = () => requireBinary("tmux", "/usr/bin/tmux");

/** One detached tmux session running a command in a real terminal of a given size. */
export class TmuxSession {
  readonly name = `agent-tui-${process.pid}-${Date.now()}`;

  constructor(command: string, size: { columns: number; rows: number }, env: Record<string, string>) {
    const exports = Object.entries(env).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
    execFileSync("tmux", [
      "new-session",
      "-d",
      "-s",
      this.name,
      "-x",
      String(size.columns),
      "-y",
      String(size.rows),
      // A person's terminal, not CI: Ink draws only its last frame when it sees CI variables.
      `env -u CI -u CONTINUOUS_INTEGRATION ${exports.join(" ")} ${command}`,
    ]);
  }

  keys(...keys: string[]): void {
    execFileSync("tmux", ["send-keys", "-t", this.name, ...keys]);
  }

  /** Types text literally (no key names), then nothing else. */
  type(text: string): void {
    execFileSync("tmux", ["send-keys", "-t", this.name, "-l", text]);
  }

  screen(): string {
    return execFileSync("tmux", ["capture-pane", "-p", "-t", this.name], { encoding: "utf8" });
  }

  /** The pane's title, which a program sets with an OSC 0 or 2 escape sequence. */
  title(): string {
    return execFileSync("tmux", ["display-message", "-p", "-t", this.name, "#{pane_title}"], {
      encoding: "utf8",
    }).trim();
  }

  resize(columns: number, rows: number): void {
    execFileSync("tmux", ["resize-window", "-t", this.name, "-x", String(columns), "-y", String(rows)]);
  }

  async waitForScreen(test: (screen: string) => boolean, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      if (test(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`screen did not match in time:\n${screen}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  kill(): void {
    try {
      execFileSync("tmux", ["kill-session", "-t", this.name]);
    } catch {
      // Already gone.
    }
  }
}
