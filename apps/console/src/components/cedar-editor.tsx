import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { HighlightStyle, StreamLanguage, syntaxHighlighting } from "@codemirror/language";
import { type Diagnostic, linter, lintGutter, setDiagnostics } from "@codemirror/lint";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers } from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { useEffect, useRef } from "react";
import { type CedarError, offsetOf } from "../lib/cedar-errors.ts";

const KEYWORDS = new Set(["permit", "forbid", "when", "unless", "in", "has", "like", "is", "if", "then", "else"]);
const VARIABLES = new Set(["principal", "action", "resource", "context"]);

/** Cedar's tokens, enough to highlight: keywords, scope variables, strings, comments, annotations. */
const cedar = StreamLanguage.define({
  token(stream) {
    if (stream.eatSpace()) return null;
    if (stream.match("//")) {
      stream.skipToEnd();
      return "comment";
    }
    if (stream.match(/^@\w+/)) return "meta";
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return "string";
    if (stream.match(/^\d+/)) return "number";
    const word = stream.match(/^[A-Za-z_]\w*/) as RegExpMatchArray | null;
    if (word) {
      if (KEYWORDS.has(word[0])) return "keyword";
      if (VARIABLES.has(word[0])) return "variableName";
      if (word[0] === "true" || word[0] === "false") return "bool";
      return /^[A-Z]/.test(word[0]) ? "typeName" : "name";
    }
    stream.next();
    return null;
  },
});

const highlight = HighlightStyle.define([
  { tag: tags.keyword, color: "#7c3aed", fontWeight: "600" },
  { tag: tags.variableName, color: "#0369a1" },
  { tag: tags.string, color: "#15803d" },
  { tag: tags.comment, color: "#64748b", fontStyle: "italic" },
  { tag: tags.meta, color: "#b45309" },
  { tag: tags.typeName, color: "#be185d" },
]);

/**
 * The Cedar editor: CodeMirror 6 with highlighting, line numbers and the API's validation errors
 * as diagnostics at their line and column (listed under the editor too, for screen readers).
 */
export default function CedarEditor({
  value,
  onChange,
  errors,
  label,
}: {
  value: string;
  onChange: (text: string) => void;
  errors: CedarError[];
  label: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  const changed = useRef(onChange);
  changed.current = onChange;

  // biome-ignore lint/correctness/useExhaustiveDependencies: the editor is created once; later values come from typing.
  useEffect(() => {
    if (!host.current) return;
    view.current = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          history(),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          cedar,
          syntaxHighlighting(highlight),
          lintGutter(),
          linter(null),
          EditorView.contentAttributes.of({ "aria-label": label }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) changed.current(update.state.doc.toString());
          }),
          EditorView.theme({
            "&": { fontSize: "13px", minHeight: "12rem" },
            ".cm-content": { fontFamily: "monospace" },
          }),
        ],
      }),
    });
    return () => view.current?.destroy();
  }, []);

  useEffect(() => {
    const editor = view.current;
    if (!editor) return;
    const text = editor.state.doc.toString();
    const diagnostics: Diagnostic[] = errors.map((e) => {
      const from = offsetOf(text, e.line, e.column);
      return { from, to: Math.min(from + 1, text.length), severity: "error", message: e.message };
    });
    editor.dispatch(setDiagnostics(editor.state, diagnostics));
  }, [errors]);

  return (
    <div>
      <div
        ref={host}
        className="rounded-md border border-slate-300 bg-white text-slate-900 dark:border-slate-600"
        data-testid="cedar-editor"
      />
      {errors.length ? (
        <ul aria-label="Policy errors" className="mt-2 text-sm text-red-700 dark:text-red-300">
          {errors.map((e) => (
            <li key={`${e.line}:${e.column}:${e.message}`}>
              Line {e.line}, column {e.column}: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
