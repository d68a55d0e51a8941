import { expect } from "vitest";
import { AppError } from "../src/errors.js";

/** Awaits `promise`, expecting it to reject with an AppError of `code`; returns that error. */
export async function expectAppError(promise: Promise<unknown>, code: string): Promise<AppError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected ${code}, got success`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
  return error as AppError;
}
