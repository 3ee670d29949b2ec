/**
 * A progress bar on stderr. On a terminal it redraws one line (at most every 100 ms); otherwise
 * (a log, a pipe) it prints a plain line at every tenth of the way, so logs stay short.
 */
export class Progress {
  private done = 0;
  private lastDraw = 0;
  private lastDecile = -1;
  private readonly started = Date.now();
  private readonly tty: boolean;
  private readonly startCount: number;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
    start = 0,
  ) {
    this.tty = !!stream.isTTY;
    this.done = start;
    this.startCount = start;
  }

  /** Moves the bar to `done` items. */
  update(done: number): void {
    this.done = done;
    if (this.tty) {
      const now = Date.now();
      if (now - this.lastDraw < 100 && done < this.total) return;
      this.lastDraw = now;
      this.stream.write(`\r${this.line(true)}\x1b[K`);
      return;
    }
    const decile = this.total > 0 ? Math.floor((done / this.total) * 10) : 10;
    if (decile !== this.lastDecile) {
      this.lastDecile = decile;
      this.stream.write(`${this.line(false)}\n`);
    }
  }

  /** Ends the bar with a closing message. */
  finish(message: string): void {
    if (this.tty) this.stream.write(`\r${this.line(true)}\x1b[K\n`);
    this.stream.write(`${message}\n`);
  }

  /** Items per second in this run (resumed items excluded). */
  rate(): number {
    const secs = (Date.now() - this.started) / 1000;
    return secs > 0 ? (this.done - this.startCount) / secs : 0;
  }

  private line(bar: boolean): string {
    const pct = this.total > 0 ? Math.min(100, (this.done / this.total) * 100) : 100;
    const rate = this.rate();
    const left = rate > 0 ? Math.ceil((this.total - this.done) / rate) : undefined;
    const width = 30;
    const filled = Math.round((pct / 100) * width);
    const graphic = bar ? `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ` : '';
    const eta = left !== undefined && this.done < this.total ? `, ${left}s left` : '';
    return `${this.label} ${graphic}${this.done}/${this.total} (${pct.toFixed(0)}%, ${rate.toFixed(0)}/s${eta})`;
  }
}
