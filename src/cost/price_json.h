// Internal: the LiteLLM importer on an already parsed document, shared by
// ParsePriceSheet and ImportLiteLlmPrices. nlohmann/json stays in src/.
#ifndef KVBILL_SRC_COST_PRICE_JSON_H_
#define KVBILL_SRC_COST_PRICE_JSON_H_

#include <string>

#include "kvbill/cost/price_sheet.h"
#include "trace/json_fields.h"

namespace kvbill {

Result<PriceSheet> ImportLiteLlmJson(const Json& json, const std::string& name);

}  // namespace kvbill

#endif  // KVBILL_SRC_COST_PRICE_JSON_H_
