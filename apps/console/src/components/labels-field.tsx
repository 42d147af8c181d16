import { Field, INPUT } from "./ui.tsx";

/** Labels as `key=value` lines (see `parseLabels`), with the parse error or the API's beside them. */
export function LabelsField({
  value,
  onChange,
  error,
}: {
  value: string;
  onChange: (text: string) => void;
  error?: string | undefined;
}) {
  return (
    <Field label="Labels" error={error} hint="One per line: team=ml">
      {(p) => (
        <textarea
          {...p}
          rows={3}
          className={`${INPUT} font-mono`}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}
