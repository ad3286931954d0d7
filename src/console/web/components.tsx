import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { copyText } from './format.js';

/** A modal dialog (the platform's <dialog>): focus moves into it, Escape closes it, the page behind is inert. */
export function Dialog({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    if (!dialog.open) dialog.showModal();
    const cancel = (e: Event) => {
      e.preventDefault();
      onClose();
    };
    dialog.addEventListener('cancel', cancel);
    return () => dialog.removeEventListener('cancel', cancel);
  }, [onClose]);
  const id = `dialog-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <dialog ref={ref} aria-labelledby={id} class={wide ? 'wide' : undefined}>
      <h2 id={id}>{title}</h2>
      {children}
    </dialog>
  );
}

/** A button that copies `text` and says so for a moment. */
export function CopyButton({ text, label = 'Copy', fallback }: { text: string; label?: string; fallback?: () => HTMLInputElement | HTMLTextAreaElement | null }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const t = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <>
      <button type="button" class="copy" onClick={async () => setState((await copyText(text, fallback?.())) ? 'copied' : 'failed')}>
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Press Ctrl+C to copy' : label}
      </button>
      <span class="visually-hidden" role="status">{state === 'copied' ? 'Copied to the clipboard' : ''}</span>
    </>
  );
}

/** An error from the service, with its hint. */
export function ErrorBanner({ error }: { error: { message: string; hint?: string | undefined } | null }) {
  if (!error) return null;
  return (
    <div class="banner error" role="alert">
      <p>{error.message}</p>
      {error.hint && <p class="hint">{error.hint}</p>}
    </div>
  );
}
