import { type ReactNode, useCallback, useEffect, useRef, useState } from "react";
import { ApiError, UnreachableError } from "../../client/api.ts";

export function errorText(err: unknown): string {
  if (err instanceof ApiError || err instanceof UnreachableError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Field messages of a 400 problem keyed by the field's path below the request part
 * (`/body/main` → `main`, `/body/verification/secret` → `verification.secret`).
 */
export function fieldErrors(err: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(err instanceof ApiError)) return out;
  for (const e of err.problem.errors ?? []) {
    const key = (e.pointer ?? "")
      .replace(/^\/(body|query|param|params|header)(?=\/|$)/, "")
      .replace(/^\//, "")
      .replaceAll("/", ".");
    if (key) out[key] = e.message;
  }
  return out;
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {errorText(error)}
    </p>
  );
}

export function Switch(props: { label: string; checked: boolean; onChange: (next: boolean) => void; busy?: boolean }) {
  return (
    <button
      type="button"
      role="switch"
      aria-checked={props.checked}
      aria-label={props.label}
      className={`switch ${props.checked ? "on" : "off"}`}
      disabled={props.busy}
      onClick={() => props.onChange(!props.checked)}
    >
      <span aria-hidden="true" className="knob" />
      <span className="switch-text">{props.checked ? "On" : "Off"}</span>
    </button>
  );
}

/**
 * A delete button that asks once more inline (no browser dialog to lose behind a tab). The focus
 * follows: to Cancel when asked (the safe choice; Escape cancels too), back to the button after.
 */
export function ConfirmDelete(props: { what: string; onConfirm: () => Promise<void> | void }) {
  const [asking, setAsking] = useState(false);
  const ask = useRef<HTMLButtonElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const answered = useRef(false);
  useEffect(() => {
    if (asking) cancel.current?.focus();
    else if (answered.current) ask.current?.focus();
  }, [asking]);
  const stopAsking = () => {
    answered.current = true;
    setAsking(false);
  };
  if (!asking) {
    return (
      <button ref={ask} type="button" className="danger" onClick={() => setAsking(true)}>
        Delete {props.what}
      </button>
    );
  }
  return (
    <fieldset
      className="confirm"
      onKeyDown={(e) => {
        if (e.key === "Escape") stopAsking();
      }}
    >
      <legend>Delete {props.what}?</legend>
      <button
        type="button"
        className="danger"
        onClick={async () => {
          setAsking(false);
          await props.onConfirm();
        }}
      >
        Yes, delete
      </button>
      <button ref={cancel} type="button" onClick={stopAsking}>
        Cancel
      </button>
    </fieldset>
  );
}

/** Runs a change, keeps its error for the page to show, and reloads what the page lists. */
export function useAction(reload: () => Promise<void>) {
  const [error, setError] = useState<unknown>();
  const act = async (action: () => Promise<unknown>) => {
    try {
      await action();
      setError(undefined);
    } catch (err) {
      setError(err);
    }
    await reload();
  };
  return { act, error };
}

/** Loads data and reloads it on demand; keeps the last good value while a reload fails. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>();
  const [error, setError] = useState<unknown>();
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(async () => {
    try {
      setData(await loadRef.current());
      setError(undefined);
    } catch (err) {
      setError(err);
    }
    // biome-ignore lint/correctness/useExhaustiveDependencies: the callers list what the load reads
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, reload, setData };
}

export function Section(props: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card" aria-label={props.title}>
      <div className="card-head">
        <h2>{props.title}</h2>
        {props.actions}
      </div>
      {props.children}
    </section>
  );
}

/** The runtime's Markdown is kept simple: bold, inline code, fenced blocks, line breaks. */
export function RichText({ text }: { text: string }) {
  const blocks = text.split(/```/);
  return (
    <>
      {blocks.map((block, i) =>
        i % 2 === 1 ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: the blocks of one text never move
          <pre key={i}>{block.replace(/^[a-z]*\n/, "")}</pre>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: as above
          <span key={i}>{inline(block)}</span>
        ),
      )}
    </>
  );
}

function inline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  const pattern = /\*\*([^*]+)\*\*|`([^`]+)`/g;
  let last = 0;
  let n = 0;
  for (const m of text.matchAll(pattern)) {
    const index = m.index ?? 0;
    if (index > last) out.push(text.slice(last, index));
    out.push(m[1] !== undefined ? <strong key={n++}>{m[1]}</strong> : <code key={n++}>{m[2]}</code>);
    last = index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
