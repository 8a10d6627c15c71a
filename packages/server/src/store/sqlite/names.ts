/** Kind and source names as integer codes (table `names`). */
import type Database from "better-sqlite3";

/**
 * The integer codes of kind and source strings (table `names`, migrations.ts version 2). A code
 * never changes once assigned, so a code read is cached for good; `forget` drops the cache after
 * a failed write transaction, which may have assigned codes that were rolled back.
 */
export class Names {
  private readonly codes = new Map<string, number>();

  constructor(
    private readonly find: Database.Statement,
    private readonly add: Database.Statement,
  ) {}

  /** The code of `name`, or undefined when no stored event ever had it. Reads only. */
  lookup(name: string): number | undefined {
    let code = this.codes.get(name);
    if (code === undefined) {
      code = (this.find.get(name) as { code: number } | undefined)?.code;
      if (code !== undefined) this.codes.set(name, code);
    }
    return code;
  }

  /** Inside a write transaction: the code of `name`, assigned on its first use. */
  intern(name: string): number {
    let code = this.lookup(name);
    if (code === undefined) {
      code = Number(this.add.run(name).lastInsertRowid);
      this.codes.set(name, code);
    }
    return code;
  }

  forget(): void {
    this.codes.clear();
  }
}
