import { useState } from "react";
import { CopyButton } from "./copy-button.tsx";
import { Dialog } from "./dialog.tsx";
import { Button, INPUT } from "./ui.tsx";

/** A secret in a read-only field (selected on focus) with a button that copies it. */
export function SecretValue({ id, label, secret }: { id: string; label: string; secret: string }) {
  return (
    <>
      <label className="text-sm font-medium" htmlFor={id}>
        {label}
      </label>
      <div className="mb-3 flex gap-2">
        <input
          id={id}
          readOnly
          className={`${INPUT} flex-1 font-mono`}
          value={secret}
          onFocus={(e) => e.target.select()}
        />
        <CopyButton text={secret} />
      </div>
    </>
  );
}

/** A secret shown exactly once: copy it, confirm it is stored, and only then may the dialog close. */
export function SecretDialog({
  title,
  label,
  secret,
  description,
  onClose,
}: {
  title: string;
  label: string;
  secret: string | undefined;
  description: string;
  onClose: () => void;
}) {
  const [confirmed, setConfirmed] = useState(false);
  const close = () => {
    setConfirmed(false);
    onClose();
  };
  return (
    <Dialog
      open={secret !== undefined}
      onOpenChange={(o) => (o ? undefined : close())}
      title={title}
      description={description}
      locked={!confirmed}
    >
      <SecretValue id="shown-once-secret" label={label} secret={secret ?? ""} />
      <label className="mb-3 flex items-center gap-2 text-sm">
        <input type="checkbox" checked={confirmed} onChange={(e) => setConfirmed(e.target.checked)} />I have stored it
      </label>
      <Button variant="primary" disabled={!confirmed} onClick={close}>
        Done
      </Button>
    </Dialog>
  );
}
