// A build-only PJRT plugin: XLA's builder without XLA. It gives GoMLX one
// device, takes the shapes of the arguments GoMLX hands over before a
// compilation (their data stays on the host, unread), writes every
// program it is asked to compile (StableHLO text) into the directory
// $UMP_PJRT_RECORD, and refuses to compile it, so nothing ever runs. TestXLABuilderAcceptsEveryProgram builds it against
// go-xla's pkg/pjrt/pjrt_c_api.h (gcc -shared) and opens it as
// xla:<path>: every program the GPU engine compiles then goes through
// go-xla's StableHLO builder, which is what refuses a bad program on a
// GPU host, on machines without one.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_c_api.h"

// The message every refused compilation starts with; the test looks for it.
#define RECORDED "build-only PJRT plugin: recorded "

struct PJRT_Error {
	PJRT_Error_Code code;
	char message[1024];
};
struct PJRT_Client {
	int unused;
};
struct PJRT_DeviceDescription {
	int unused;
};
struct PJRT_Device {
	int unused;
};
struct PJRT_Event {
	int unused;
};
// A buffer is its shape only.
struct PJRT_Buffer {
	PJRT_Buffer_Type type;
	size_t num_dims;
	int64_t dims[];
};

static PJRT_Client the_client;
static PJRT_DeviceDescription the_description;
static PJRT_Device the_device;
static PJRT_Device *devices[1] = {&the_device};
static PJRT_Event done; // every transfer is done at once
static int programs;

static PJRT_Error *error(PJRT_Error_Code code, const char *message) {
	PJRT_Error *e = calloc(1, sizeof *e);
	if (e == NULL) {
		return NULL; // nothing to report it with
	}
	e->code = code;
	snprintf(e->message, sizeof e->message, "%s", message);
	return e;
}

static void error_destroy(PJRT_Error_Destroy_Args *a) { free(a->error); }
static void error_message(PJRT_Error_Message_Args *a) {
	a->message = a->error->message;
	a->message_size = strlen(a->error->message);
}
static PJRT_Error *error_code(PJRT_Error_GetCode_Args *a) {
	a->code = a->error->code;
	return NULL;
}

static PJRT_Error *plugin_initialize(PJRT_Plugin_Initialize_Args *a) {
	(void)a;
	return NULL;
}
static PJRT_Error *plugin_attributes(PJRT_Plugin_Attributes_Args *a) {
	a->attributes = NULL;
	a->num_attributes = 0;
	return NULL;
}

static PJRT_Error *client_create(PJRT_Client_Create_Args *a) {
	a->client = &the_client;
	return NULL;
}
static PJRT_Error *client_destroy(PJRT_Client_Destroy_Args *a) {
	(void)a;
	return NULL;
}
static PJRT_Error *client_platform_name(PJRT_Client_PlatformName_Args *a) {
	a->platform_name = "build-only";
	a->platform_name_size = strlen(a->platform_name);
	return NULL;
}
static PJRT_Error *client_platform_version(PJRT_Client_PlatformVersion_Args *a) {
	a->platform_version = "0";
	a->platform_version_size = 1;
	return NULL;
}
static PJRT_Error *client_process_index(PJRT_Client_ProcessIndex_Args *a) {
	a->process_index = 0;
	return NULL;
}
static PJRT_Error *client_devices(PJRT_Client_Devices_Args *a) {
	a->devices = devices;
	a->num_devices = 1;
	return NULL;
}
static PJRT_Error *client_addressable_devices(PJRT_Client_AddressableDevices_Args *a) {
	a->addressable_devices = devices;
	a->num_addressable_devices = 1;
	return NULL;
}
static PJRT_Error *client_default_device_assignment(PJRT_Client_DefaultDeviceAssignment_Args *a) {
	for (size_t i = 0; i < a->default_assignment_size; i++) {
		a->default_assignment[i] = 0;
	}
	return NULL;
}

// client_compile writes the program to $UMP_PJRT_RECORD/program-N.mlir and
// refuses it, naming the file.
static PJRT_Error *client_compile(PJRT_Client_Compile_Args *a) {
	const char *dir = getenv("UMP_PJRT_RECORD");
	if (dir == NULL || *dir == 0) {
		return error(PJRT_Error_Code_FAILED_PRECONDITION, "build-only PJRT plugin: set UMP_PJRT_RECORD to a directory for the programs");
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/program-%03d.mlir", dir, ++programs);
	FILE *f = fopen(path, "wb");
	if (f == NULL) {
		char message[4200];
		snprintf(message, sizeof message, "build-only PJRT plugin: cannot create %s", path);
		return error(PJRT_Error_Code_FAILED_PRECONDITION, message);
	}
	size_t wrote = fwrite(a->program->code, 1, a->program->code_size, f);
	if (fclose(f) != 0 || wrote != a->program->code_size) {
		return error(PJRT_Error_Code_FAILED_PRECONDITION, "build-only PJRT plugin: a program could not be written");
	}
	char message[4200];
	snprintf(message, sizeof message, RECORDED "%s (%.*s, %zu bytes); it compiles and runs nothing", path,
	         (int)a->program->format_size, a->program->format, a->program->code_size);
	return error(PJRT_Error_Code_UNIMPLEMENTED, message);
}

static PJRT_Error *buffer_from_host(PJRT_Client_BufferFromHostBuffer_Args *a) {
	PJRT_Buffer *b = calloc(1, sizeof *b + a->num_dims * sizeof b->dims[0]);
	if (b == NULL) {
		return error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "build-only PJRT plugin: out of memory");
	}
	b->type = a->type;
	b->num_dims = a->num_dims;
	if (a->num_dims > 0) {
		memcpy(b->dims, a->dims, a->num_dims * sizeof b->dims[0]);
	}
	a->buffer = b;
	a->done_with_host_buffer = &done;
	return NULL;
}
static PJRT_Error *buffer_destroy(PJRT_Buffer_Destroy_Args *a) {
	free(a->buffer);
	return NULL;
}
static PJRT_Error *buffer_dimensions(PJRT_Buffer_Dimensions_Args *a) {
	a->dims = a->buffer->dims;
	a->num_dims = a->buffer->num_dims;
	return NULL;
}
static PJRT_Error *buffer_element_type(PJRT_Buffer_ElementType_Args *a) {
	a->type = a->buffer->type;
	return NULL;
}
static PJRT_Error *buffer_device(PJRT_Buffer_Device_Args *a) {
	a->device = &the_device;
	return NULL;
}
static PJRT_Error *buffer_is_deleted(PJRT_Buffer_IsDeleted_Args *a) {
	a->is_deleted = false;
	return NULL;
}

static PJRT_Error *event_destroy(PJRT_Event_Destroy_Args *a) {
	(void)a;
	return NULL;
}
static PJRT_Error *event_is_ready(PJRT_Event_IsReady_Args *a) {
	a->is_ready = true;
	return NULL;
}
static PJRT_Error *event_await(PJRT_Event_Await_Args *a) {
	(void)a;
	return NULL;
}

static PJRT_Error *device_get_description(PJRT_Device_GetDescription_Args *a) {
	a->device_description = &the_description;
	return NULL;
}
static PJRT_Error *device_is_addressable(PJRT_Device_IsAddressable_Args *a) {
	a->is_addressable = true;
	return NULL;
}
static PJRT_Error *device_local_hardware_id(PJRT_Device_LocalHardwareId_Args *a) {
	a->local_hardware_id = 0;
	return NULL;
}
static PJRT_Error *description_id(PJRT_DeviceDescription_Id_Args *a) {
	a->id = 0;
	return NULL;
}
static PJRT_Error *description_process_index(PJRT_DeviceDescription_ProcessIndex_Args *a) {
	a->process_index = 0;
	return NULL;
}
static PJRT_Error *description_kind(PJRT_DeviceDescription_Kind_Args *a) {
	a->device_kind = "build-only";
	a->device_kind_size = strlen(a->device_kind);
	return NULL;
}
static PJRT_Error *description_debug_string(PJRT_DeviceDescription_DebugString_Args *a) {
	a->debug_string = "build-only device (records programs, runs nothing)";
	a->debug_string_size = strlen(a->debug_string);
	return NULL;
}

// Every entry not set here is NULL: go-xla calls none of them before a
// compilation, and nothing runs after one (every compilation is refused).
static PJRT_Api api = {
	.struct_size = PJRT_Api_STRUCT_SIZE,
	.pjrt_api_version = {.struct_size = PJRT_Api_Version_STRUCT_SIZE,
	                     .major_version = PJRT_API_MAJOR,
	                     .minor_version = PJRT_API_MINOR},
	.PJRT_Error_Destroy = error_destroy,
	.PJRT_Error_Message = error_message,
	.PJRT_Error_GetCode = error_code,
	.PJRT_Plugin_Initialize = plugin_initialize,
	.PJRT_Plugin_Attributes = plugin_attributes,
	.PJRT_Event_Destroy = event_destroy,
	.PJRT_Event_IsReady = event_is_ready,
	.PJRT_Event_Await = event_await,
	.PJRT_Client_Create = client_create,
	.PJRT_Client_Destroy = client_destroy,
	.PJRT_Client_PlatformName = client_platform_name,
	.PJRT_Client_ProcessIndex = client_process_index,
	.PJRT_Client_PlatformVersion = client_platform_version,
	.PJRT_Client_Devices = client_devices,
	.PJRT_Client_AddressableDevices = client_addressable_devices,
	.PJRT_Client_Compile = client_compile,
	.PJRT_Client_DefaultDeviceAssignment = client_default_device_assignment,
	.PJRT_Client_BufferFromHostBuffer = buffer_from_host,
	.PJRT_DeviceDescription_Id = description_id,
	.PJRT_DeviceDescription_ProcessIndex = description_process_index,
	.PJRT_DeviceDescription_Kind = description_kind,
	.PJRT_DeviceDescription_DebugString = description_debug_string,
	.PJRT_Device_GetDescription = device_get_description,
	.PJRT_Device_IsAddressable = device_is_addressable,
	.PJRT_Device_LocalHardwareId = device_local_hardware_id,
	.PJRT_Buffer_Destroy = buffer_destroy,
	.PJRT_Buffer_Dimensions = buffer_dimensions,
	.PJRT_Buffer_ElementType = buffer_element_type,
	.PJRT_Buffer_Device = buffer_device,
	.PJRT_Buffer_IsDeleted = buffer_is_deleted,
};

const PJRT_Api *GetPjrtApi(void) { return &api; }
