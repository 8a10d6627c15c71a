/**
 * Which events of a long recording the HTML report shows: the first ones, every flagged one (an
 * event with an issue) with its neighbours, and the last ones. Items are decided one at a time, in
 * order, holding at most `context` undecided items, so that any length streams through.
 */

/** How much of a recording the report shows. */
export interface WindowBounds {
  /** Events shown from the start of each input. */
  head: number;
  /** Neighbours shown before and after each flagged event, and events shown at the end of an input. */
  context: number;
  /** Events shown in the whole report: past it, nothing more is shown (the report says so). */
  maxShown: number;
}

/** What a report shows unless told otherwise (tests make the bounds small). */
export const DEFAULT_BOUNDS: WindowBounds = { head: 2_000, context: 3, maxShown: 20_000 };

/** Where the decisions go, one call an item, in the order the items came. */
interface WindowSink<T> {
  show(item: T): void;
  omit(item: T): void;
}

/** The events shown so far in a report, shared by the windows of its inputs. */
export interface ShowBudget {
  shown: number;
}

/** The decisions for one input's items; `push` them in order, then `end`. */
export class EventWindow<T> {
  private seen = 0;
  /** Undecided items, the last `context` not shown: neighbours before a flagged item, or the tail. */
  private readonly before: T[] = [];
  private after = 0;

  constructor(
    private readonly bounds: WindowBounds,
    private readonly sink: WindowSink<T>,
    private readonly budget: ShowBudget = { shown: 0 },
  ) {}

  push(item: T, flagged: boolean): void {
    const index = this.seen++;
    if (index < this.bounds.head || flagged) {
      if (this.before.length > 0) for (const held of this.before.splice(0)) this.show(held);
      this.show(item);
      if (flagged) this.after = this.bounds.context;
      return;
    }
    if (this.after > 0) {
      this.after--;
      this.show(item);
      return;
    }
    this.before.push(item);
    if (this.before.length > this.bounds.context) this.sink.omit(this.before.shift()!);
  }

  /**
   * Shows an item that is not one of the events (an issue of the input itself) where it came,
   * with the events around it; it takes nothing of the budget, which bounds events.
   */
  note(item: T): void {
    if (this.before.length > 0) for (const held of this.before.splice(0)) this.show(held);
    this.sink.show(item);
    this.after = this.bounds.context;
  }

  /** Shows the held items: the input's last events. */
  end(): void {
    for (const held of this.before.splice(0)) this.show(held);
  }

  private show(item: T): void {
    if (this.budget.shown >= this.bounds.maxShown) {
      this.sink.omit(item);
      return;
    }
    this.budget.shown++;
    this.sink.show(item);
  }
}
