// The typed Pragma client: validates queries, sends every parameter explicitly, retries, and decodes to domain types.
import type { Dispatcher } from "undici";
import type {
  CandleSeries,
  FundingRate,
  FundingRatePage,
  OnchainEntrySet,
  OnchainPublisher,
  PairPrice,
} from "../domain/types.js";
import { httpTarget, type HttpTarget } from "../http-client.js";
import { USER_AGENT } from "../version.js";
import { candlestickPath, decodeCandleSeriesBody } from "./candlestick.js";
import { decodeFundingRatePageBody, fundingRatesPath, iterateFundingPages } from "./funding-rates.js";
import type { SkippedItemObserver } from "./decode.js";
import { createHttpTransport, defaultSleep, type GetRequest } from "./http.js";
import { decodeOnchainEntrySetBody, onchainPath } from "./onchain.js";
import { decodePairPriceBody, pairPricePath } from "./pair-price.js";
import { decodeOnchainPublishersBody, publishersPath } from "./publishers.js";
import type { RetryPolicy } from "./retry.js";
import type { CallOptions, EndpointName, PragmaClient, RequestObserver, ResponseObserver } from "./types.js";
import { decodeVaultBody, vaultPath } from "./vault.js";

export { createDispatcher, type DispatcherOptions } from "./dispatcher.js";
export type { RetryPolicy } from "./retry.js";
export type { SkippedItem, SkippedItemObserver } from "./decode.js";

/** Default cap of a success body (the publishers list is the largest, well under 1 MiB). */
const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Options of createPragmaClient; time, randomness and the pool are injected. */
export interface PragmaClientOptions {
  /** Base URL of the /node/v1 endpoints, e.g. http://127.0.0.1:3000 (a path prefix is kept). */
  readonly baseUrl: string;
  /** Base URL of the vault API (its path is /api/v1/vaults/{id} below it). */
  readonly vaultBaseUrl: string;
  /** Sent as `x-api-key` to the /node/v1 endpoints when non-empty (never to the separate vault host). */
  readonly apiKey?: string;
  readonly dispatcher: Dispatcher;
  /** Per-attempt timeout covering headers and the whole body. */
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly random?: () => number;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Monotonic clock in ms (durations, retry budget). */
  readonly nowMs?: () => number;
  readonly observer?: RequestObserver;
  /** Told of each attempt's raw status and body (the recorder). */
  readonly onResponse?: ResponseObserver;
  /** Told of each list item a decoder skipped (bad publisher, feed, component, candle, funding rate). */
  readonly onSkippedItem?: SkippedItemObserver;
  readonly maxBodyBytes?: number;
  /** Bound of iterateFundingRates (default 1000 pages). */
  readonly maxFundingPages?: number;
}

/** Build the Pragma client; invalid input rejects with PM_ERR_INVALID_REQUEST before any request is sent. */
export function createPragmaClient(options: PragmaClientOptions): PragmaClient {
  const baseUrl = stripTrailingSlash(options.baseUrl);
  const vaultBaseUrl = stripTrailingSlash(options.vaultBaseUrl);
  const commonHeaders = { "user-agent": USER_AGENT, accept: "application/json" };
  const nodeHeaders: Readonly<Record<string, string>> = Object.freeze(
    options.apiKey !== undefined && options.apiKey.length > 0
      ? { ...commonHeaders, "x-api-key": options.apiKey }
      : commonHeaders,
  );
  const vaultHeaders: Readonly<Record<string, string>> = Object.freeze({ ...commonHeaders });
  const transport = createHttpTransport({
    dispatcher: options.dispatcher,
    timeoutMs: options.timeoutMs,
    retry: options.retry,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    random: options.random ?? Math.random,
    sleep: options.sleep ?? defaultSleep,
    nowMs: options.nowMs ?? (() => performance.now()),
    epochMs: Date.now,
    ...(options.observer === undefined ? {} : { observer: options.observer }),
    ...(options.onResponse === undefined ? {} : { onResponse: options.onResponse }),
  });

  /**
   * Where each query object seen goes, validated, built and split once: a target keeps its query objects, so
   * its polls build no query string and parse no URL (held weakly: entries go with the queries).
   */
  const targets = new WeakMap<object, HttpTarget>();
  /**
   * Validate (synchronously, via `path()`), then GET and decode; validation errors become rejections. Not an async
   * function: it returns the transport's own promise (no second promise resolved with it, two microtasks fewer per poll).
   */
  function get<Q, T>(
    endpoint: EndpointName,
    query: Q,
    path: (query: Q) => string,
    decode: (text: string) => T,
    call: CallOptions | undefined,
    vault = false,
  ): Promise<T> {
    // a query object is a target's own (its split URL is kept); a string (a vault id) is built per request
    const key = typeof query === "object" && query !== null ? query : null;
    let url: string | HttpTarget | undefined = key === null ? undefined : targets.get(key);
    if (url === undefined) {
      try {
        url = (vault ? vaultBaseUrl : baseUrl) + path(query);
      } catch (error: unknown) {
        // the validators throw PmErrors: a rejection, as from an async function
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      const split = splitUrl(url);
      if (split !== null) {
        url = split;
        if (key !== null) targets.set(key, split);
      }
    }
    const req: GetRequest<T> = { endpoint, url, headers: vault ? vaultHeaders : nodeHeaders, decode };
    return transport(req, call);
  }

  const onSkip = safeSkipObserver(options.onSkippedItem);
  // Decoders bound to the skip observer once, so the hot path allocates no closure per request.
  const decodePairPrice = (text: string): PairPrice => decodePairPriceBody(text, onSkip);
  const decodeFunding = (text: string): FundingRatePage => decodeFundingRatePageBody(text, onSkip);
  const decodeOnchain = (text: string): OnchainEntrySet => decodeOnchainEntrySetBody(text, onSkip);
  const decodePublishers = (text: string): readonly OnchainPublisher[] =>
    decodeOnchainPublishersBody(text, onSkip);

  const client: PragmaClient = {
    // the path builders are passed as they are (no closure per request): the query is their argument
    getPairPrice: (query, call) => get("pair_price", query, pairPricePath, decodePairPrice, call),
    getCandlesticks: (query, call) => {
      const sinceMs = call?.sinceMs;
      // a bounded read (a warm-up) decodes only its look-back's candles, of the 10 000 a body holds
      const decode = (text: string): CandleSeries => decodeCandleSeriesBody(text, onSkip, sinceMs);
      return get("candlestick", query, candlestickPath, decode, call);
    },
    getFundingRates: (query, call) => get("funding_rates", query, fundingRatesPath, decodeFunding, call),
    iterateFundingRates: (query, call): AsyncIterable<FundingRate> =>
      iterateFundingPages((page) => client.getFundingRates(page, call), query, options.maxFundingPages),
    getOnchainEntry: (query, call) => get("onchain", query, onchainPath, decodeOnchain, call),
    getOnchainPublishers: (query, call) => get("publishers", query, publishersPath, decodePublishers, call),
    // a vault id is a string, not an object a target keeps: its URL is built per request
    getVault: (vaultId, call) => get("vault", vaultId, vaultPath, decodeVaultBody, call, true),
  };
  return client;
}

/** The observer made safe: a throwing observer must not turn a good body into a failed decode. */
function safeSkipObserver(observer: SkippedItemObserver | undefined): SkippedItemObserver | undefined {
  if (observer === undefined) return undefined;
  return (item) => {
    try {
      observer(item);
    } catch {
      // Metrics and logs are best effort; the decoded list stands.
    }
  };
}

/** The URL split for dispatch, or null when it is not one (the request then fails in the transport, as any bad URL). */
function splitUrl(url: string): HttpTarget | null {
  try {
    return httpTarget(url);
  } catch {
    return null;
  }
}

/** "http://h:1/x/" → "http://h:1/x", so path templates (which start with "/") concatenate cleanly. */
function stripTrailingSlash(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}
