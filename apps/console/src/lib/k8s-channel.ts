/**
 * The Kubernetes streaming protocol the exec WebSocket speaks (`v4.channel.k8s.io`): every binary
 * frame starts with its channel byte: 0 stdin, 1 stdout, 2 stderr, 3 status (JSON), 4 resize (JSON).
 */
export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, status: 3, resize: 4 } as const;

const encoder = new TextEncoder();

export function frame(channel: number, payload: string | Uint8Array): Uint8Array {
  const bytes = typeof payload === "string" ? encoder.encode(payload) : payload;
  const out = new Uint8Array(bytes.length + 1);
  out[0] = channel;
  out.set(bytes, 1);
  return out;
}

export function resizeFrame(cols: number, rows: number): Uint8Array {
  return frame(CHANNEL.resize, JSON.stringify({ Width: cols, Height: rows }));
}

/** The exit code a status frame reports: 0 for Success, the ExitCode cause otherwise. */
export function exitCodeOf(status: string): number | undefined {
  try {
    const parsed = JSON.parse(status) as {
      status?: string;
      details?: { causes?: { reason?: string; message?: string }[] };
    };
    if (parsed.status === "Success") return 0;
    const cause = parsed.details?.causes?.find((c) => c.reason === "ExitCode");
    return cause?.message !== undefined ? Number(cause.message) : 1;
  } catch {
    return undefined;
  }
}

/** The exec WebSocket's address for a sandbox, on this page's own origin. */
export function execUrl(
  location: { protocol: string; host: string },
  projectId: string,
  sandboxId: string,
  size: { cols: number; rows: number },
  command = "sh",
): string {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const query = new URLSearchParams({ command, tty: "true", cols: String(size.cols), rows: String(size.rows) });
  return `${scheme}//${location.host}/v1/projects/${projectId}/sandboxes/${sandboxId}/exec?${query}`;
}
