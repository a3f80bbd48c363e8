#include "gateway/tools/json_schema.hpp"

#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include <exception>
#include <vector>

namespace gateway::tools {

namespace {

// valijson's context ["<root>", "[path]", "[0]"] as a JSON pointer "/path/0".
std::string pointer(const std::vector<std::string>& context) {
    std::string out;
    for (const auto& part : context) {
        if (part == "<root>") continue;
        out += '/';
        std::string_view name = part;
        if (name.starts_with('[') && name.ends_with(']')) name = name.substr(1, name.size() - 2);
        if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
            name = name.substr(1, name.size() - 2);
        out += name;
    }
    return out.empty() ? "/" : out;
}

}  // namespace

json_schema::json_schema() : compiled_(std::make_unique<valijson::Schema>()) {}
json_schema::~json_schema() = default;

std::unique_ptr<json_schema> json_schema::compile(const boost::json::value& schema,
                                                  std::string& error) {
    if (!schema.is_object()) {
        error = "a JSON Schema must be an object";
        return nullptr;
    }
    std::unique_ptr<json_schema> out(new json_schema());
    try {
        valijson::SchemaParser parser;
        valijson::adapters::BoostJsonAdapter adapter(schema);
        parser.populateSchema(adapter, *out->compiled_);
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
    return out;
}

std::string json_schema::validate(const boost::json::value& document) const {
    valijson::Validator validator(valijson::Validator::kStrongTypes);
    valijson::adapters::BoostJsonAdapter adapter(document);
    valijson::ValidationResults results;
    if (validator.validate(*compiled_, adapter, &results)) return {};
    // The most specific error is the one deepest in the document.
    valijson::ValidationResults::Error best, error;
    while (results.popError(error))
        if (best.description.empty() || error.context.size() > best.context.size()) best = error;
    return pointer(best.context) + ": " + best.description;
}

}  // namespace gateway::tools
