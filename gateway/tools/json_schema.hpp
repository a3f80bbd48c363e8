#pragma once

#include <boost/json/value.hpp>

#include <memory>
#include <string>

namespace valijson {
class Schema;
}

namespace gateway::tools {

// A compiled JSON Schema (draft 7, via valijson) that reports the most specific failure as a
// JSON pointer and reason. Immutable once compiled, so shared freely between threads.
class json_schema {
public:
    // nullptr and `error` when `schema` cannot be compiled.
    static std::unique_ptr<json_schema> compile(const boost::json::value& schema,
                                                std::string& error);
    ~json_schema();

    // "" when `document` satisfies the schema, else e.g. "/start_line: value type not permitted".
    std::string validate(const boost::json::value& document) const;

private:
    json_schema();
    std::unique_ptr<valijson::Schema> compiled_;
};

}  // namespace gateway::tools
