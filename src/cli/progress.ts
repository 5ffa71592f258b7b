/** A one-line progress bar on stderr (redrawn in place on a terminal, a line every few seconds otherwise). */
import { oneLine } from '../terminal-text.js';
import { writeRaw } from './terminal.js';

export interface ProgressBar {
  update(done: number, total: number, extra: string): void;
  finish(): void;
}

export function createProgressBar(label: string, stream: NodeJS.WriteStream = process.stderr): ProgressBar {
  const started = Date.now();
  let lastLine = 0;
  return {
    update(done, total, extra) {
      const elapsed = (Date.now() - started) / 1000;
      const ratio = total ? done / total : 1;
      const width = 24;
      const filled = Math.round(ratio * width);
      const eta = done > 0 && done < total ? `${Math.round((elapsed / done) * (total - done))}s` : '-';
      const line = oneLine(
        `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${extra} elapsed ${Math.round(elapsed)}s eta ${eta}`,
      );
      if (stream.isTTY)
        writeRaw(stream, `\r${line}\u001b[K`); // its own CR and erase-line, raw
      else if (Date.now() - lastLine > 2_000 || done === total) {
        stream.write(`${line}\n`);
        lastLine = Date.now();
      }
    },
    finish() {
      if (stream.isTTY) stream.write('\n');
    },
  };
}
