// GET /node/v1/onchain/publishers: query building (network, data_type) and the publisher-list decoder.
import { NETWORKS, PUBLISHER_TYPES, type OnchainPublisher, type PublisherFeed } from "../domain/types.js";
import {
  FieldError,
  asObject,
  decodeItems,
  decodeWith,
  parseJsonBody,
  readCount,
  readDecimals,
  readHexPrice,
  readNonEmptyString,
  readOptionalArray,
  readSecondsAsMs,
  readString,
  withPrefix,
  type JsonObject,
  type SkippedItemObserver,
} from "./decode.js";
import type { PublishersQuery } from "./types.js";
import { buildQuery, validateRequiredEnum } from "./validate.js";
import { PATHS } from "./wire.js";

/** Path and query of GET /node/v1/onchain/publishers; both parameters are required upstream. */
export function publishersPath(query: PublishersQuery): string {
  const network = validateRequiredEnum("publishers", "network", query.network, NETWORKS);
  const dataType = validateRequiredEnum("publishers", "publisherType", query.publisherType, PUBLISHER_TYPES);
  return (
    PATHS.publishers() +
    buildQuery([
      ["network", network],
      ["data_type", dataType],
    ])
  );
}

/** Decode one feed of a publisher; `decimals: 0` marks the price as not comparable. */
function decodeFeed(value: unknown): PublisherFeed {
  const o = asObject(value, "");
  const decimals = readDecimals(o, "decimals");
  return {
    pairId: readNonEmptyString(o, "pair_id"),
    source: readString(o, "source"),
    price: readHexPrice(o, "price", decimals),
    decimalsKnown: decimals > 0,
    dailyUpdates: readCount(o, "daily_updates"),
    lastUpdatedMs: readSecondsAsMs(o, "last_updated_timestamp"),
  };
}

/** A publisher's last update: unix seconds as ms, or null (absent or null: the live server's "no component"). */
function readLastUpdatedMs(o: JsonObject): number | null {
  const value = o["last_updated_timestamp"];
  return value === null || value === undefined ? null : readSecondsAsMs(o, "last_updated_timestamp");
}

/** Decode one publisher with its stats and feeds; a bad feed is skipped and reported, not the publisher. */
function decodePublisher(value: unknown, onSkip: SkippedItemObserver | undefined): OnchainPublisher {
  const o = asObject(value, "");
  return {
    publisher: readNonEmptyString(o, "publisher"),
    websiteUrl: readString(o, "website_url"),
    type: readCount(o, "type"),
    nbFeeds: readCount(o, "nb_feeds"),
    dailyUpdates: readCount(o, "daily_updates"),
    totalUpdates: readCount(o, "total_updates"),
    lastUpdatedMs: readLastUpdatedMs(o),
    feeds: decodeItems("publishers", readOptionalArray(o, "components"), "components", decodeFeed, onSkip),
  };
}

/** Decode a parsed publishers body (a JSON array); bad publishers and feeds are skipped and reported to `onSkip`. */
export function decodeOnchainPublishers(
  json: unknown,
  onSkip?: SkippedItemObserver,
): readonly OnchainPublisher[] {
  return decodeWith("publishers", json, (value) => {
    if (!Array.isArray(value)) throw new FieldError("body", "array");
    const items = value as readonly unknown[];
    const out: OnchainPublisher[] = [];
    for (let i = 0; i < items.length; i++) {
      // a bad feed is reported under its publisher's index: `[i].components[j].field`
      const feedSkip: SkippedItemObserver | undefined =
        onSkip === undefined ? undefined : (item) => onSkip({ ...item, field: `[${i}].${item.field}` });
      try {
        out.push(decodePublisher(items[i], feedSkip));
      } catch (error) {
        if (!(error instanceof FieldError)) throw error;
        withPrefix(error, `[${i}]`);
        onSkip?.({ endpoint: "publishers", field: error.path, expected: error.expected });
      }
    }
    return out;
  });
}

/** Parse and decode a publishers response body text. */
export function decodeOnchainPublishersBody(
  text: string,
  onSkip?: SkippedItemObserver,
): readonly OnchainPublisher[] {
  return decodeOnchainPublishers(parseJsonBody("publishers", text), onSkip);
}
