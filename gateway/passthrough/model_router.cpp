#include "gateway/passthrough/model_router.hpp"

#include "gateway/config/glob.hpp"

#include <boost/json/basic_parser_impl.hpp>

namespace gateway::passthrough {

namespace json = boost::json;

namespace {

// SAX handler: records the value of the top-level "model" key, then stops the parser.
struct model_handler {
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    int depth = 0;
    bool next_is_model = false;
    std::string key;
    std::string value;
    std::optional<std::string> model;

    bool stop(json::error_code& ec) {
        ec = json::error::extra_data;  // any error: the caller looks at `model`
        return false;
    }
    bool on_value_other(json::error_code& ec) {
        if (depth == 1 && next_is_model) return stop(ec);  // "model" is not a string
        next_is_model = false;
        return true;
    }
    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code& ec) {
        if (depth == 1 && next_is_model) return stop(ec);
        ++depth;
        return true;
    }
    bool on_object_end(std::size_t, json::error_code&) {
        --depth;
        return true;
    }
    bool on_array_begin(json::error_code& ec) {
        if (depth == 0 || (depth == 1 && next_is_model)) return stop(ec);
        ++depth;
        return true;
    }
    bool on_array_end(std::size_t, json::error_code&) {
        --depth;
        return true;
    }
    bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
        if (depth == 1) key.append(s.data(), s.size());
        return true;
    }
    bool on_key(json::string_view s, std::size_t, json::error_code&) {
        if (depth == 1) {
            key.append(s.data(), s.size());
            next_is_model = key == "model";
            key.clear();
        }
        return true;
    }
    bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
        if (depth == 1 && next_is_model) value.append(s.data(), s.size());
        return true;
    }
    bool on_string(json::string_view s, std::size_t, json::error_code& ec) {
        if (depth == 1 && next_is_model) {
            value.append(s.data(), s.size());
            model = std::move(value);
            return stop(ec);
        }
        return true;
    }
    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t, json::string_view, json::error_code& ec) {
        return on_value_other(ec);
    }
    bool on_uint64(std::uint64_t, json::string_view, json::error_code& ec) {
        return on_value_other(ec);
    }
    bool on_double(double, json::string_view, json::error_code& ec) { return on_value_other(ec); }
    bool on_bool(bool, json::error_code& ec) { return on_value_other(ec); }
    bool on_null(json::error_code& ec) { return on_value_other(ec); }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }
};

}  // namespace

std::optional<std::string> read_model(std::string_view json_body) {
    json::parse_options options;
    options.max_depth = 64;
    json::basic_parser<model_handler> parser(options);
    json::error_code ec;
    parser.write_some(false, json_body.data(), json_body.size(), ec);
    return std::move(parser.handler().model);
}

std::string upstream_model(const config::upstream_config& up, std::string_view model) {
    for (const auto& [from, to] : up.model_map)
        if (from == model) return to;
    return std::string(model);
}

model_router::model_router(const std::vector<config::upstream_config>& upstreams) {
    for (const auto& u : upstreams) {
        globs_.push_back(u.models);
        providers_.push_back(u.provider);
    }
}

std::optional<std::size_t> model_router::route(std::optional<std::string_view> model,
                                               config::provider_kind provider) const {
    std::optional<std::size_t> first;
    for (std::size_t i = 0; i < globs_.size(); ++i) {
        if (providers_[i] != provider) continue;
        if (!first) first = i;
        if (model)
            for (const auto& g : globs_[i])
                if (config::glob_match(g, *model)) return i;
    }
    return first;
}

std::size_t model_router::route(std::optional<std::string_view> model) const {
    if (!model) return 0;
    for (std::size_t i = 0; i < globs_.size(); ++i)
        for (const auto& g : globs_[i])
            if (config::glob_match(g, *model)) return i;
    return 0;
}

}  // namespace gateway::passthrough
