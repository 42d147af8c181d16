import { type FormEvent, useState } from "react";
import { api } from "../base.ts";
import { ConfirmDelete, ErrorBox, Section, useLoad } from "../ui.tsx";

export function MemoryPage() {
  const [query, setQuery] = useState("");
  const [submitted, setSubmitted] = useState("");
  const notes = useLoad(() => api.memory(submitted), [submitted]);
  const [error, setError] = useState<unknown>();
  const search = (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(query.trim());
  };
  return (
    <Section title="Memory">
      <form className="row" onSubmit={search}>
        <label htmlFor="memory-q" className="visually-hidden">
          Search notes
        </label>
        <input
          id="memory-q"
          type="search"
          value={query}
          placeholder="Search notes"
          onChange={(e) => setQuery(e.target.value)}
        />
        <button type="submit">Search</button>
      </form>
      <p className="muted">{submitted ? `Best matches for “${submitted}”.` : "Newest notes first."}</p>
      <ErrorBox error={error ?? notes.error} />
      {notes.data?.length === 0 && <p className="muted">No notes.</p>}
      <ul className="notes">
        {notes.data?.map((n) => (
          <li key={n.id}>
            <p>{n.text}</p>
            <span className="muted">
              {n.source} · {new Date(n.createdAt).toLocaleString()} · {n.shared ? "shared with the team" : "private"}
            </span>
            <button
              type="button"
              aria-label={`${n.shared ? "Stop sharing" : "Share with the team"}: ${n.text.slice(0, 60)}`}
              onClick={async () => {
                try {
                  await api.shareNote(n.id, !n.shared);
                  setError(undefined);
                } catch (err) {
                  setError(err);
                }
                await notes.reload();
              }}
            >
              {n.shared ? "Stop sharing" : "Share with the team"}
            </button>
            <ConfirmDelete
              what="note"
              onConfirm={async () => {
                try {
                  await api.forget(n.id);
                  setError(undefined);
                } catch (err) {
                  setError(err);
                }
                await notes.reload();
              }}
            />
          </li>
        ))}
      </ul>
    </Section>
  );
}
