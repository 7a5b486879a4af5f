// A one-line progress reporter for long jobs: items done, a rate (MB/s for byte-sized jobs, items/s for
// counted ones), percentage and ETA, redrawn in place on a terminal's stderr at most a few times a
// second. Silent when stderr is not a TTY (piped, CI, tests), so logs never fill with carriage returns.

/** Options of a progress line (`Progress` in src/util/progress.ts). */
export interface ProgressOptions {
  /** Shown first, e.g. "ingest". */
  label: string;
  /** What the items are, e.g. "pages". */
  unit?: string;
  /** Total bytes of the job when known (enables percentage and ETA). */
  totalBytes?: number;
  /** Bytes already done before this run started (a resumed job): counted in the percentage, not in the rate. */
  startBytes?: number;
  /**
   * Total items of the job when known. With `totalBytes` unknown, the percentage and ETA are by items;
   * with `countItems`, the whole line is: `done / total (pct)`, items per second, ETA.
   */
  totalItems?: number;
  /** Count in items, not bytes (training questions, encoded passages): rate in items per second, no byte figures. */
  countItems?: boolean;
  /** Items already done before this run started (a resumed job): counted in the percentage, not in the rate. */
  startItems?: number;
  /** Where to draw; default process.stderr. */
  stream?: {
    /** Whether it is a terminal. */
    isTTY?: boolean;
    /** Writes `s` as it is. */
    write(s: string): unknown;
  };
  /** Force drawing on or off; default: only when `stream.isTTY`. */
  enabled?: boolean;
  /** Minimum milliseconds between redraws; default 250. */
  intervalMs?: number;
  /** Clock in milliseconds (for tests); default performance.now. */
  now?: () => number;
}

/** `1234567` → `1,234,567`. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** Bytes as `812 kB`, `12.3 MB`, `6.40 GB` (powers of 1000). */
export function formatBytes(n: number): string {
  if (n < 1e6) return `${(n / 1e3).toFixed(0)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e9).toFixed(2)} GB`;
}

/** Seconds as `42s`, `3m05s`, `2h07m`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "?";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Items per second: `0.42`, `8.3`, `1,234`. */
export function formatRate(perSecond: number): string {
  if (perSecond < 1) return perSecond.toFixed(2);
  if (perSecond < 100) return perSecond.toFixed(1);
  return formatCount(perSecond);
}

/** Seconds of work before an items-per-second rate is shown. */
const MIN_RATE_SECONDS = 0.5;

/** Redraws a status line on a terminal: byte-sized jobs (ingest, evaluation) or counted ones (`totalItems`). */
export class Progress {
  readonly enabled: boolean;
  private readonly stream: { write(s: string): unknown };
  private readonly now: () => number;
  private readonly started: number;
  private lastDraw = -Infinity;
  private items = 0;
  private bytes = 0;
  private drawn = false;

  constructor(private readonly options: ProgressOptions) {
    this.stream = options.stream ?? process.stderr;
    this.enabled = options.enabled ?? (options.stream ?? process.stderr).isTTY === true;
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
    this.bytes = options.startBytes ?? 0;
  }

  /** Records the job's position (items done, absolute byte offset) and redraws if it is time. */
  update(items: number, bytes = 0): void {
    this.items = items;
    this.bytes = bytes;
    if (!this.enabled) return;
    const t = this.now();
    if (t - this.lastDraw < (this.options.intervalMs ?? 250)) return;
    this.lastDraw = t;
    this.stream.write(`\r${this.line(t)}\x1b[K`);
    this.drawn = true;
  }

  /** The status line for time `t`. */
  line(t = this.now()): string {
    const o = this.options;
    const seconds = (t - this.started) / 1000;
    if (o.countItems) {
      const unit = o.unit ?? "items";
      const total = o.totalItems;
      // A rate over less than half a second is noise (4,987 questions in the first 0.4 ms read as
      // "12,997,563 questions/s"): shown as "-" until there is enough time to measure.
      const measured = seconds >= MIN_RATE_SECONDS;
      const rate = measured ? (this.items - (o.startItems ?? 0)) / seconds : 0;
      const rateText = measured ? `${formatRate(rate)} ${unit}/s` : `- ${unit}/s`;
      if (total === undefined) return [o.label, `${formatCount(this.items)} ${unit}`, rateText].join("  ");
      const pct = total > 0 ? Math.min(100, (100 * this.items) / total) : 100;
      return [
        o.label,
        `${formatCount(this.items)} / ${formatCount(total)} ${unit} (${pct.toFixed(0)}%)`,
        rateText,
        `ETA ${this.items >= total ? "0s" : rate > 0 ? formatDuration(Math.max(0, total - this.items) / rate) : "?"}`,
      ].join("  ");
    }
    const done = this.bytes - (o.startBytes ?? 0);
    const rate = seconds > 0 ? done / seconds : 0;
    const parts = [o.label, `${formatCount(this.items)} ${o.unit ?? "items"}`];
    if (o.totalBytes !== undefined && o.totalBytes > 0) {
      const pct = Math.min(100, (100 * this.bytes) / o.totalBytes);
      parts.push(`${formatBytes(this.bytes)} / ${formatBytes(o.totalBytes)} (${pct.toFixed(0)}%)`);
    } else {
      parts.push(formatBytes(this.bytes));
    }
    parts.push(`${(rate / 1e6).toFixed(1)} MB/s`);
    if (o.totalBytes !== undefined && o.totalBytes > 0) {
      parts.push(`ETA ${rate > 0 ? formatDuration((o.totalBytes - this.bytes) / rate) : "?"}`);
    } else if (o.totalItems !== undefined && o.totalItems > 0) {
      const itemRate = seconds > 0 ? this.items / seconds : 0;
      parts.push(`${Math.min(100, (100 * this.items) / o.totalItems).toFixed(0)}%`, `ETA ${itemRate > 0 ? formatDuration((o.totalItems - this.items) / itemRate) : "?"}`);
    }
    return parts.join("  ");
  }

  /** Draws the final state and ends the line (nothing when disabled). */
  done(): void {
    if (!this.enabled) return;
    this.stream.write(`\r${this.line()}\x1b[K\n`);
    this.drawn = false;
  }

  /** Erases the line (before printing a message under an active bar). */
  clear(): void {
    if (this.enabled && this.drawn) this.stream.write("\r\x1b[K");
    this.drawn = false;
    this.lastDraw = -Infinity;
  }
}

/** A throttled one-line status (free text) on stderr, only when stderr is a terminal: for jobs whose
 * progress is not a byte count (index builds, retrieval batches, conversions). */
export class ProgressLine {
  private last = 0;
  private readonly on = process.stderr.isTTY === true;
  constructor(private readonly label: string) {}
  update(text: () => string): void {
    if (!this.on) return;
    const now = Date.now();
    if (now - this.last < 250) return;
    this.last = now;
    process.stderr.write(`\r\x1b[K${this.label}: ${text()}`);
  }
  done(): void {
    if (this.on) process.stderr.write("\r\x1b[K");
  }
}

/**
 * One report from a long job, given to an {@link OnProgress} callback. Library code reports through this
 * type and draws nothing; a program decides how to show it (the CLI: `progressDrawer` (src/util/progress.ts) on a
 * terminal, nothing when piped). Two shapes, told apart by `items`:
 *
 * - a **count** (`items` given): how far the job has got, with what a `Progress` line shows (unit, totals,
 *   bytes). The first count of a label fixes its unit and totals; later ones move `items` and `bytes`.
 * - a **status** (`status` given, no `items`): free text for a phase with no count to show ("merging
 *   segments: 1,234 terms"); `status` is a function so that its text is only built when drawn.
 *
 * A job ends each line it started with an event of the same label and shape and `done: true` (a count
 * line then shows its final state and ends with a newline; a status line, whose `done` event carries a
 * `status` too, is erased); the job sends it
 * whether or not it reported anything before, so a job with nothing to count still shows its line.
 * `clear: true` erases a count line for a moment (before a message is printed under it).
 * Events of one label arrive in order; several labels may be open at once (a count line, then a status
 * line for the next phase).
 */
export interface ProgressEvent {
  /** What the job is, shown first, e.g. "index bm25", "ingest", "retrieve". */
  label: string;
  /** Items done so far, counting any done before a resumed job started (pages, units, queries). */
  items?: number;
  /** Where the job is in its input, in bytes from the input's start (byte-sized jobs). */
  bytes?: number;
  /** What the items are, e.g. "pages", "paragraph units" (default "items"). */
  unit?: string;
  /** Items of the whole job, when known (enables a percentage and an ETA). */
  totalItems?: number;
  /** Bytes of the whole input, when known (enables a percentage and an ETA by bytes). */
  totalBytes?: number;
  /** Items done before this run started (a resumed job): counted in the percentage, not in the rate. */
  startItems?: number;
  /** Bytes done before this run started (a resumed job): counted in the percentage, not in the rate. */
  startBytes?: number;
  /** The line counts items (`done / total`, items per second), not bytes (MB/s). */
  countItems?: boolean;
  /** A status line's text, instead of counts (called only when the line is drawn). */
  status?: () => string;
  /** The line ends (see above). */
  done?: boolean;
  /** Erase the count line for now (it is drawn again by the next count). */
  clear?: boolean;
}

/** Where a long job sends its {@link ProgressEvent}s; absent: the job reports nothing and draws nothing. */
export type OnProgress = (event: ProgressEvent) => void;

/**
 * An {@link OnProgress} that draws: counts as a `Progress` line, statuses as a `ProgressLine`, one line
 * per label and shape, on `stream` (default stderr) when it is a terminal or `enabled`. Status lines are
 * drawn on stderr, only when it is a terminal.
 */
export function progressDrawer(options: Pick<ProgressOptions, "stream" | "enabled"> = {}): OnProgress {
  const bars = new Map<string, Progress>();
  const lines = new Map<string, ProgressLine>();
  return (e) => {
    if (e.items !== undefined || e.status === undefined) {
      let bar = bars.get(e.label);
      if (!bar) {
        const { label, unit, totalItems, totalBytes, startItems, startBytes, countItems } = e;
        bar = new Progress({ label, unit, totalItems, totalBytes, startItems, startBytes, countItems, ...options });
        bars.set(e.label, bar);
      }
      if (e.done) {
        bar.done();
        bars.delete(e.label);
      } else if (e.clear) bar.clear();
      else bar.update(e.items ?? 0, e.bytes ?? 0);
      return;
    }
    let line = lines.get(e.label);
    if (!line) {
      line = new ProgressLine(e.label);
      lines.set(e.label, line);
    }
    if (e.done) {
      line.done();
      lines.delete(e.label);
    } else line.update(e.status);
  };
}
