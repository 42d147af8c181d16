import type { FormEvent, ReactNode, SelectHTMLAttributes, TextareaHTMLAttributes } from "react";
import { useId } from "react";
import { ApiError } from "../lib/problem.ts";
import { Dialog } from "./dialog.tsx";
import { Button, ErrorNote, Field, INPUT } from "./ui.tsx";

/** What a form dialog shows of its mutation: whether it runs, and how it failed. */
interface Submission {
  isPending: boolean;
  error: unknown;
}

/**
 * A problem whose `errors[]` name fields is shown beside those fields; only an error no field
 * names is shown below the form.
 */
export function formLevelError(error: unknown): unknown {
  return error instanceof ApiError && error.problem.errors?.length ? undefined : error;
}

/**
 * A dialog holding one form: its fields, the API's error below them and a submit button that
 * says so while the request runs (a "create" or "edit" dialog). `invalid` (a field the console checks itself) keeps the button
 * disabled and the form from submitting; `fieldErrorsBeside` leaves a problem that names fields to
 * those fields (see `formLevelError`). `below` sits between the error and the buttons (a preview, a
 * progress note); `actions` are buttons before the submit one, and `cancelLabel` adds one after it
 * that closes the dialog.
 */
export function FormDialog({
  open = true,
  onOpenChange,
  title,
  description,
  submission,
  onSubmit,
  submitLabel,
  pendingLabel,
  invalid = false,
  noValidate = false,
  fieldErrorsBeside = false,
  locked = false,
  submitVariant = "primary",
  actions,
  cancelLabel,
  below,
  scroll = false,
  done,
  children,
}: {
  open?: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description?: string;
  submission: Submission;
  onSubmit: () => void;
  submitLabel: string;
  pendingLabel: string;
  invalid?: boolean;
  noValidate?: boolean;
  fieldErrorsBeside?: boolean;
  /** A dialog that must not close yet (a secret not confirmed as copied). */
  locked?: boolean;
  submitVariant?: "primary" | "danger";
  actions?: ReactNode;
  cancelLabel?: string;
  below?: ReactNode;
  /** A form that may grow taller than the screen scrolls inside the dialog. */
  scroll?: boolean;
  /** Once set, shown instead of the form: what the request made (a link, a secret shown once). */
  done?: ReactNode;
  children: ReactNode;
}) {
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!invalid) onSubmit();
  };
  const submitButton = (
    <Button type="submit" variant={submitVariant} disabled={submission.isPending || invalid}>
      {submission.isPending ? pendingLabel : submitLabel}
    </Button>
  );
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title={title}
      {...(description !== undefined ? { description } : {})}
      locked={locked}
    >
      {done ?? (
        <form
          onSubmit={submit}
          noValidate={noValidate}
          {...(scroll ? { className: "max-h-[80vh] overflow-y-auto" } : {})}
        >
          {children}
          <ErrorNote error={fieldErrorsBeside ? formLevelError(submission.error) : submission.error} />
          {below}
          {actions || cancelLabel ? (
            <div className="flex gap-2">
              {actions}
              {submitButton}
              {cancelLabel ? (
                <Button disabled={submission.isPending} onClick={() => onOpenChange(false)}>
                  {cancelLabel}
                </Button>
              ) : null}
            </div>
          ) : (
            submitButton
          )}
        </form>
      )}
    </Dialog>
  );
}

/** A `<select>` of fixed choices; `labelOf` names a choice when its value is not its label. */
export function Select<T extends string>({
  choices,
  value,
  onChange,
  labelOf = (choice) => choice,
  ...select
}: Omit<SelectHTMLAttributes<HTMLSelectElement>, "value" | "onChange"> & {
  choices: readonly T[];
  value: T;
  onChange: (value: T) => void;
  labelOf?: (choice: T) => string;
}) {
  return (
    <select {...select} className={INPUT} value={value} onChange={(e) => onChange(e.target.value as T)}>
      {choices.map((c) => (
        <option key={c} value={c}>
          {labelOf(c)}
        </option>
      ))}
    </select>
  );
}

/** A labelled `Select` with the API's error (or a hint) beside it. */
export function SelectField<T extends string>({
  label,
  error,
  hint,
  ...select
}: Parameters<typeof Select<T>>[0] & { label: string; error?: string | undefined; hint?: string }) {
  return (
    <Field label={label} error={error} {...(hint ? { hint } : {})}>
      {(p) => <Select {...p} {...select} />}
    </Field>
  );
}

/** The roles offered, and the current one first when it is not among them. */
function offered<R extends string>(roles: readonly R[], current: R): readonly R[] {
  return roles.includes(current) ? roles : [current, ...roles];
}

/**
 * An organization or project role: the roles offered, and the current one even when it is not
 * among them (a member above the signed-in user keeps showing their own role).
 */
export function RoleSelect<R extends string>({
  roles,
  ...select
}: Omit<Parameters<typeof Select<R>>[0], "choices"> & { roles: readonly R[] }) {
  return <Select {...select} choices={offered(roles, select.value)} />;
}

/** A labelled `RoleSelect` ("Role", "Project role") with the API's error or a hint beside it. */
export function RoleField<R extends string>({
  roles,
  ...field
}: Omit<Parameters<typeof SelectField<R>>[0], "choices"> & { roles: readonly R[] }) {
  return <SelectField {...field} choices={offered(roles, field.value)} />;
}

/** A labelled `<textarea>` (a pasted document, a list) with the API's error (or a hint) beside it. */
export function TextAreaField({
  label,
  error,
  hint,
  className = "",
  ...textarea
}: TextareaHTMLAttributes<HTMLTextAreaElement> & {
  label: string;
  error?: string | undefined;
  hint?: string | undefined;
}) {
  return (
    <Field label={label} error={error} {...(hint ? { hint } : {})}>
      {(p) => <textarea {...p} {...textarea} className={`${INPUT} ${className}`} />}
    </Field>
  );
}

/** One choice among a few, shown side by side as radio buttons under a legend. */
export function RadioField<T extends string>({
  legend,
  choices,
  value,
  onChange,
}: {
  legend: string;
  /** Each choice's value and label. */
  choices: readonly (readonly [T, string])[];
  value: T;
  onChange: (value: T) => void;
}) {
  const name = useId();
  return (
    <fieldset className="mb-3 flex flex-wrap gap-3 text-sm">
      <legend className="mb-1 font-medium">{legend}</legend>
      {choices.map(([choice, label]) => (
        <label key={choice} className="flex items-center gap-1">
          <input type="radio" name={name} checked={value === choice} onChange={() => onChange(choice)} />
          {label}
        </label>
      ))}
    </fieldset>
  );
}
