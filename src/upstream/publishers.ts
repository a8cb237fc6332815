// GET /node/v1/onchain/publishers: query building (network, data_type) and the publisher-list decoder.
import { NETWORKS, PUBLISHER_TYPES, type OnchainPublisher, type PublisherFeed } from "../domain/types.js";
import {
  FieldError,
  asObject,
  decodeArray,
  decodeWith,
  parseJsonBody,
  readArray,
  readCount,
  readDecimals,
  readHexPrice,
  readNonEmptyString,
  readSecondsAsMs,
  readString,
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

/** Decode one publisher with its stats and feeds. */
function decodePublisher(value: unknown): OnchainPublisher {
  const o = asObject(value, "");
  return {
    publisher: readNonEmptyString(o, "publisher"),
    websiteUrl: readString(o, "website_url"),
    type: readCount(o, "type"),
    nbFeeds: readCount(o, "nb_feeds"),
    dailyUpdates: readCount(o, "daily_updates"),
    totalUpdates: readCount(o, "total_updates"),
    lastUpdatedMs: readSecondsAsMs(o, "last_updated_timestamp"),
    feeds: decodeArray(readArray(o, "components"), "components", decodeFeed),
  };
}

/** Decode a parsed publishers body (a JSON array). */
export function decodeOnchainPublishers(json: unknown): readonly OnchainPublisher[] {
  return decodeWith("publishers", json, (value) => {
    if (!Array.isArray(value)) throw new FieldError("body", "array");
    return decodeArray(value as readonly unknown[], "", decodePublisher);
  });
}

/** Parse and decode a publishers response body text. */
export function decodeOnchainPublishersBody(text: string): readonly OnchainPublisher[] {
  return decodeOnchainPublishers(parseJsonBody("publishers", text));
}
