import type { ComponentProps, InputHTMLAttributes, ReactNode } from "react";
import { useEffect, useId, useLayoutEffect, useRef, useState } from "react";
import type { Allowance } from "../lib/permissions.ts";
import { ApiError, describeError } from "../lib/problem.ts";

const BUTTON = {
  primary: "bg-indigo-600 text-white hover:bg-indigo-700 disabled:bg-indigo-600/50",
  secondary:
    "border border-slate-300 bg-white text-slate-900 hover:bg-slate-50 dark:border-slate-600 dark:bg-slate-800 dark:text-slate-100 dark:hover:bg-slate-700",
  danger: "bg-red-700 text-white hover:bg-red-800 disabled:bg-red-700/50",
} as const;

export function Button({
  variant = "secondary",
  className = "",
  ...props
}: ComponentProps<"button"> & { variant?: keyof typeof BUTTON }) {
  return (
    <button
      type="button"
      className={`inline-flex items-center gap-1 rounded-md px-3 py-1.5 text-sm font-medium focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-500 disabled:cursor-not-allowed disabled:opacity-60 ${BUTTON[variant]} ${className}`}
      {...props}
    />
  );
}

/**
 * A control the signed-in role may not use: shown disabled with the reason beside it (and
 * announced with it), instead of a click that fails.
 */
export function Guarded({ allowance, children }: { allowance: Allowance; children: (disabled: boolean) => ReactNode }) {
  const id = useId();
  if (allowance.allowed) return <>{children(false)}</>;
  return (
    <span className="inline-flex items-center gap-2" aria-describedby={id}>
      {children(true)}
      <span id={id} className="text-xs text-slate-600 dark:text-slate-300">
        {allowance.reason}
      </span>
    </span>
  );
}

/**
 * Whether asking again may help: not when the API said no for good (a bad request, a denial, an id
 * that does not exist, a conflict), only for a failure on its side, a rate limit or no answer.
 */
function retryable(error: unknown): boolean {
  if (!(error instanceof ApiError)) return true;
  return error.status >= 500 || error.status === 408 || error.status === 429;
}

export function ErrorNote({ error, retry }: { error: unknown; retry?: () => void }) {
  if (!error) return null;
  const rule = error instanceof ApiError ? error.ruleId : undefined;
  return (
    <div
      role="alert"
      className="my-2 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
    >
      {describeError(error)}
      {rule ? (
        <span className="ml-2 font-mono" data-testid="rule-id">
          Rule: {rule}
        </span>
      ) : null}
      {retry && retryable(error) ? (
        <Button className="ml-3" onClick={retry}>
          Retry
        </Button>
      ) : null}
    </div>
  );
}

/** The window's title (what a tab, a history entry and a screen reader name): the page's, then ours. */
export function useDocumentTitle(title: string | undefined) {
  useEffect(() => {
    if (title) document.title = `${title} · Agentplane console`;
  }, [title]);
}

export function PageTitle({ children, actions }: { children: ReactNode; actions?: ReactNode }) {
  // The heading as rendered (children may be markup), read after each render.
  const heading = useRef<HTMLHeadingElement>(null);
  const [text, setText] = useState<string>();
  useEffect(() => {
    setText(heading.current?.textContent?.trim() || undefined);
  });
  useDocumentTitle(text);
  return (
    <div className="mb-4 flex flex-wrap items-center justify-between gap-2">
      <h1 ref={heading} className="text-xl font-semibold">
        {children}
      </h1>
      {actions ? <div className="flex items-center gap-2">{actions}</div> : null}
    </div>
  );
}

export function Field({
  label,
  error,
  hint,
  children,
}: {
  label: string;
  error?: string | undefined;
  hint?: string;
  children: (props: { id: string; "aria-describedby"?: string; "aria-invalid"?: boolean }) => ReactNode;
}) {
  const id = useId();
  const noteId = `${id}-note`;
  const note = error ?? hint;
  return (
    <div className="mb-3 flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium">
        {label}
      </label>
      {children({ id, ...(note ? { "aria-describedby": noteId } : {}), ...(error ? { "aria-invalid": true } : {}) })}
      {/* Always there and polite: an error that appears while the person types is read out. */}
      <span
        id={noteId}
        aria-live="polite"
        className={`text-xs empty:-mt-1 ${error ? "text-red-700 dark:text-red-300" : "text-slate-600 dark:text-slate-300"}`}
      >
        {note}
      </span>
    </div>
  );
}

export const INPUT =
  "rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm text-slate-900 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100";

/**
 * A table in a box of its own width: wider than that, it scrolls inside the box (a labelled region
 * that takes the focus, so arrow keys scroll it) with a note saying so, rather than the page. An
 * empty header (over a row's buttons) is named Actions for screen readers.
 */
export function Table({ headers, children, label }: { headers: string[]; children: ReactNode; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setScrolls(el.scrollWidth > el.clientWidth + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    if (el.firstElementChild) observer.observe(el.firstElementChild);
    return () => observer.disconnect();
  }, []);
  const region = scrolls ? { role: "region", "aria-label": `${label}, scrolls sideways`, tabIndex: 0 } : {};
  return (
    <>
      {scrolls ? (
        <p aria-hidden="true" className="mb-1 text-right text-xs text-slate-600 dark:text-slate-300">
          Scroll sideways for more columns →
        </p>
      ) : null}
      <div
        ref={box}
        {...region}
        className="relative overflow-x-auto rounded-md border border-slate-200 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-500 dark:border-slate-700"
      >
        <table className="w-full text-left text-sm" aria-label={label}>
          <thead className="bg-slate-100 dark:bg-slate-800">
            <tr>
              {headers.map((h) => (
                <th key={h} scope="col" className="px-2 py-2 font-medium min-[60rem]:px-3">
                  {h || <span className="sr-only">Actions</span>}
                </th>
              ))}
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-200 dark:divide-slate-700">{children}</tbody>
        </table>
      </div>
    </>
  );
}

/**
 * A cell; `wrap` for a name people chose or an id, which may be long and unbroken and must not push
 * the row's actions away. Narrower padding below 60rem, where the navigation is a drawer.
 */
export function Td({ children, mono = false, wrap = false }: { children: ReactNode; mono?: boolean; wrap?: boolean }) {
  const kind = `${mono ? "font-mono text-xs" : ""} ${wrap ? "min-w-[10rem] max-w-[28rem] [overflow-wrap:anywhere]" : ""}`;
  return <td className={`px-2 py-2 align-top min-[60rem]:px-3 ${kind}`}>{children}</td>;
}

export function Loading({ what }: { what: string }) {
  return (
    <p role="status" className="text-sm text-slate-600 dark:text-slate-300">
      Loading {what}…
    </p>
  );
}

/** A labelled text input with the API's error (or a hint) beside it. */
export function TextField({
  label,
  error,
  hint,
  className = "",
  ...input
}: InputHTMLAttributes<HTMLInputElement> & { label: string; error?: string | undefined; hint?: string | undefined }) {
  return (
    <Field label={label} error={error} {...(hint ? { hint } : {})}>
      {(p) => <input {...p} {...input} className={`${INPUT} ${className}`} />}
    </Field>
  );
}
