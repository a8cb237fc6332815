// GET /node/v1/funding_rates/history/{base}/{quote}: query building, page decoder and the all-pages iterator.
import { PmError } from "../domain/errors.js";
import { FUNDING_FREQUENCIES, type FundingRate, type FundingRatePage } from "../domain/types.js";
import {
  asObject,
  decodeItems,
  decodeWith,
  parseJsonBody,
  readArray,
  readBoolean,
  readCount,
  readFiniteNumber,
  readString,
  type SkippedItemObserver,
} from "./decode.js";
import type { FundingRateQuery } from "./types.js";
import {
  buildQuery,
  invalid,
  validateEnum,
  validateIntInRange,
  validatePair,
  validateSource,
  validateTimestampS,
  type QueryParam,
} from "./validate.js";
import { PATHS } from "./wire.js";

/** Largest page size the server accepts (also its default). */
export const MAX_FUNDING_PAGE_SIZE = 1000;
/** Default bound of iterateFundingRates: beyond this many pages the server is presumed to loop. */
export const DEFAULT_MAX_FUNDING_PAGES = 1000;

/** Path and query of GET /node/v1/funding_rates/history; frequency, page and page_size always sent. */
export function fundingRatesPath(query: FundingRateQuery): string {
  const endpoint = "funding_rates";
  const { base, quote } = validatePair(endpoint, query.pair);
  const source = validateSource(endpoint, query.source);
  const frequency = validateEnum(endpoint, "frequency", query.frequency, FUNDING_FREQUENCIES, "All");
  const page = validateIntInRange(endpoint, "page", query.page, 1, Number.MAX_SAFE_INTEGER, 1);
  const pageSize = validateIntInRange(
    endpoint,
    "pageSize",
    query.pageSize,
    1,
    MAX_FUNDING_PAGE_SIZE,
    MAX_FUNDING_PAGE_SIZE,
  );
  const params: QueryParam[] = [["source", source]];
  if (query.rangeS !== undefined) {
    const start = validateTimestampS(endpoint, "rangeS.start", query.rangeS.start);
    const end = validateTimestampS(endpoint, "rangeS.end", query.rangeS.end);
    if (start > end) invalid(endpoint, "rangeS", `start ${start} is after end ${end}`);
    // Integers only, so the comma-separated form is URL-safe as is (the server expects a literal comma).
    params.push(["timestamp", { raw: `${start},${end}` }]);
  }
  params.push(["frequency", frequency], ["page", page], ["page_size", pageSize]);
  return PATHS.fundingHistory(base, quote) + buildQuery(params);
}

/** Decode one funding-rate observation. */
function decodeFundingRate(value: unknown): FundingRate {
  const o = asObject(value, "");
  return {
    pair: readString(o, "pair"),
    source: readString(o, "source"),
    timestampMs: readCount(o, "timestamp_ms"),
    hourlyRate: readFiniteNumber(o, "hourly_rate"),
  };
}

/** Decode a parsed funding-rate page; a bad observation is skipped and reported to `onSkip`. */
export function decodeFundingRatePage(json: unknown, onSkip?: SkippedItemObserver): FundingRatePage {
  return decodeWith("funding_rates", json, (value) => {
    const o = asObject(value, "body");
    return {
      hasNextPage: readBoolean(o, "has_next_page"),
      page: readCount(o, "page"),
      pageSize: readCount(o, "page_size"),
      rates: decodeItems("funding_rates", readArray(o, "data"), "data", decodeFundingRate, onSkip),
    };
  });
}

/** Parse and decode a funding-rate page body text. */
export function decodeFundingRatePageBody(text: string, onSkip?: SkippedItemObserver): FundingRatePage {
  return decodeFundingRatePage(parseJsonBody("funding_rates", text), onSkip);
}

/** Walk every page from `query.page` (default 1) until has_next_page is false; fails past `maxPages`. */
export async function* iterateFundingPages(
  fetchPage: (query: FundingRateQuery) => Promise<FundingRatePage>,
  query: FundingRateQuery,
  maxPages: number = DEFAULT_MAX_FUNDING_PAGES,
): AsyncGenerator<FundingRate, void, undefined> {
  // Validate up front so a bad query fails on the first next(), before any request.
  fundingRatesPath(query);
  let page = query.page ?? 1;
  for (let fetched = 0; ; fetched++) {
    if (fetched >= maxPages) {
      throw new PmError(
        "PM_ERR_UPSTREAM_DECODE",
        `funding_rates: has_next_page still true after ${maxPages} pages`,
        {
          details: { endpoint: "funding_rates", field: "has_next_page" },
        },
      );
    }
    const result = await fetchPage({ ...query, page });
    yield* result.rates;
    if (!result.hasNextPage) return;
    page += 1;
  }
}
