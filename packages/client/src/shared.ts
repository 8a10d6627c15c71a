/** What both entries export besides `createClient`. */
export type { AcsClient, AppendableEvent, AppendEventBatchOptions, AppendEventBatchResult, ClientOptions } from "./client.js";
export { API_KEY_HEADER } from "./request.js";
export {
  AbortError,
  ApiError,
  ClientError,
  InvalidEventError,
  InvalidResponseError,
  NetworkError,
  isApiError,
  type ApiErrorWithStatus,
} from "./errors.js";
export type { NamedData, NodeUploadInput, UploadFiles, UploadInput } from "./files.js";
export {
  LIVE_CLOSE_CODES,
  LiveError,
  type BackoffOptions,
  type LiveSocket,
  type LiveStatus,
  type StatusDetail,
  type SubscribeOptions,
  type Subscription,
  type UserMessage,
} from "./live.js";
export type {
  CallOptions,
  ContentOf,
  CountEventsQuery,
  ErrorBody,
  ErrorStatus,
  EventFilters,
  EventPage,
  HTTPValidationError,
  OperationBody,
  OperationId,
  OperationQuery,
  OperationResult,
  Responses,
  SearchEventsQuery,
  SearchedEvent,
  SuccessCode,
  SuccessStatus,
  ValidationErrorDetail,
} from "./types.js";
