/**
 * Plan tests run under the debugger (the Test Explorer's Debug profile): the test controller
 * prepares a test with the shared runner and registers it here under an id that the launch
 * configuration carries (`lightsopTest`); the debug host then gives the adapter the test's plan
 * text and mock registry instead of the editor's plan and skills, and hands it the variables the
 * run ended with, which the test's `check` judges. No `vscode` import.
 */
import type { PreparedTest, VariableOutcome } from '../../../packages/cli/src/plan-tests/runner';

export interface DebuggedTest {
  readonly id: string;
  readonly prepared: PreparedTest;
  /** Absolute path of the plan (the frames' source). */
  readonly planPath: string;
  /** For the Debug Console: what answers the plan's commands. */
  readonly note: string;
  /** The run ended: the variables it ended with (declared ones and `input`). */
  finished(outcomes: ReadonlyMap<string, VariableOutcome>, aborted: boolean): void;
}

/** The launch attribute naming the test a debug session runs. */
export const TEST_LAUNCH_KEY = 'lightsopTest';

export class DebuggedTests {
  private readonly tests = new Map<string, DebuggedTest>();
  private next = 0;

  /** A fresh id for a test about to be launched. */
  newId(): string {
    return `plan-test-${++this.next}`;
  }

  add(test: DebuggedTest): void {
    this.tests.set(test.id, test);
  }

  delete(id: string): void {
    this.tests.delete(id);
  }

  /** The test a launch configuration runs, if it names one. */
  of(args: object): DebuggedTest | undefined {
    const id = (args as Record<string, unknown>)[TEST_LAUNCH_KEY];
    return typeof id === 'string' ? this.tests.get(id) : undefined;
  }
}
