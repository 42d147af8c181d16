import { FitAddon } from "@xterm/addon-fit";
import { Terminal as XTerm } from "@xterm/xterm";
import "@xterm/xterm/css/xterm.css";
import { useEffect, useRef, useState } from "react";
import { CHANNEL, execUrl, exitCodeOf, frame, resizeFrame } from "../lib/k8s-channel.ts";
import { Button } from "./ui.tsx";

type State = { kind: "connecting" } | { kind: "open" } | { kind: "ended"; exit?: number; reason?: string };

/**
 * A shell in a sandbox: xterm.js over the exec WebSocket (the session cookie authenticates it;
 * the gateway checks the page's origin). Resizes follow the element; the end of the shell is shown
 * with its exit code, and "Reconnect" opens a new one.
 */
export default function Terminal(props: { projectId: string; sandboxId: string }) {
  const [attempt, setAttempt] = useState(0);
  return <TerminalSession key={attempt} {...props} onReconnect={() => setAttempt((n) => n + 1)} />;
}

function TerminalSession({
  projectId,
  sandboxId,
  onReconnect,
}: {
  projectId: string;
  sandboxId: string;
  onReconnect: () => void;
}) {
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<State>({ kind: "connecting" });

  useEffect(() => {
    if (!host.current) return;
    const term = new XTerm({ convertEol: false, cursorBlink: true, fontSize: 13, screenReaderMode: true });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(host.current);
    fit.fit();
    const socket = new WebSocket(execUrl(window.location, projectId, sandboxId, { cols: term.cols, rows: term.rows }), [
      "v4.channel.k8s.io",
    ]);
    socket.binaryType = "arraybuffer";
    const decoder = new TextDecoder();
    let exit: number | undefined;
    socket.onopen = () => {
      setState({ kind: "open" });
      term.focus();
    };
    socket.onmessage = (event) => {
      const data = new Uint8Array(event.data as ArrayBuffer);
      if (data.length === 0) return;
      const payload = data.subarray(1);
      if (data[0] === CHANNEL.stdout || data[0] === CHANNEL.stderr) term.write(payload);
      else if (data[0] === CHANNEL.status) exit = exitCodeOf(decoder.decode(payload));
    };
    socket.onclose = (event) => {
      setState({
        kind: "ended",
        ...(exit !== undefined ? { exit } : {}),
        ...(event.reason ? { reason: event.reason } : {}),
      });
    };
    const input = term.onData((text) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(frame(CHANNEL.stdin, text));
    });
    const resize = term.onResize(({ cols, rows }) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(resizeFrame(cols, rows));
    });
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(host.current);
    return () => {
      observer.disconnect();
      input.dispose();
      resize.dispose();
      socket.close();
      term.dispose();
    };
  }, [projectId, sandboxId]);

  return (
    <section aria-label="Terminal" className="mt-3">
      <p role="status" className="mb-1 text-sm">
        {state.kind === "connecting"
          ? "Connecting…"
          : state.kind === "open"
            ? "Connected"
            : `Session ended${state.exit !== undefined ? ` (exit ${state.exit})` : ""}${state.reason ? `: ${state.reason}` : ""}`}
        {state.kind === "ended" ? (
          <Button className="ml-3" onClick={onReconnect}>
            Reconnect
          </Button>
        ) : null}
      </p>
      <div ref={host} className="h-72 rounded-md bg-black p-1" data-testid="terminal" />
    </section>
  );
}
