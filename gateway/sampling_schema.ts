/**
 * Sampling values every agent protocol accepts, validated the same way: a policy engine given a
 * negative temperature or a `top_p` above 1 fails or samples garbage, so the agent gets a 400 that
 * names the field instead.
 *
 * @module
 */
import { z } from "zod";

/** `temperature`: 0 (greedy) to 2, as the OpenAI APIs bound it. */
export const TemperatureSchema = z.number().min(0).max(2);

/** `top_p`: a probability mass in (0, 1]. */
export const TopPSchema = z.number().gt(0).max(1);
